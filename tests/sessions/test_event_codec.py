"""Events read back through the fast path equal the appended ones, types included.

The corpus covers the Event shapes ADK produces; each is appended through the
real service on both backends and must come back ``==`` with identical nested
types (``strict_equal``), and be stored with the fast-path mark. Events the
fast path cannot reproduce must be stored unmarked and read the validating way.
"""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest
from fastapi.openapi.models import APIKey, APIKeyIn
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes, OAuth2Auth
from google.adk.auth.auth_tool import AuthConfig
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types
from pydantic import ValidationError

from adk_yuxi.sessions import SqlSessionService, _event_codec
from adk_yuxi.sessions._event_codec import FAST_CODEC
from adk_yuxi.sessions._strict_equal import strict_equal
from adk_yuxi.storage import YuxiServices

APP = "codec"


def _content(*parts: types.Part, role: str = "model") -> types.Content:
    return types.Content(role=role, parts=list(parts))


def corpus() -> list[Event]:
    """One event per shape worth proving; each uses fields the others do not."""
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=12,
        candidates_token_count=5,
        total_token_count=17,
        prompt_tokens_details=[
            types.ModalityTokenCount(modality=types.MediaModality.TEXT, token_count=10),
            types.ModalityTokenCount(modality=types.MediaModality.IMAGE, token_count=2),
        ],
    )
    grounding = types.GroundingMetadata(
        web_search_queries=["weather beijing"],
        grounding_chunks=[
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://a.example", title="A"))
        ],
        grounding_supports=[
            types.GroundingSupport(
                segment=types.Segment(start_index=0, end_index=4, text="Sunny"),
                grounding_chunk_indices=[0],
                confidence_scores=[0.9],
            )
        ],
    )
    return [
        Event(author="user", invocation_id="i1", content=_content(types.Part(text="你好"))),
        Event(
            author="agent",
            invocation_id="i1",
            content=_content(
                types.Part(text="thinking…", thought=True, thought_signature=b"\x00\xffsig+/="),
                types.Part(text="answer"),
            ),
            finish_reason=types.FinishReason.STOP,
            usage_metadata=usage,
            model_version="gemini-x",
        ),
        Event(
            author="agent",
            invocation_id="i2",
            content=_content(
                types.Part(
                    function_call=types.FunctionCall(
                        id="c1",
                        name="lookup",
                        args={"q": "数据库", "n": 3, "nested": {"list": [1, 2.5, None, True]}},
                    )
                )
            ),
            long_running_tool_ids={"c1", "c0"},
        ),
        Event(
            author="user",
            invocation_id="i2",
            content=_content(
                types.Part(
                    function_response=types.FunctionResponse(
                        id="c1", name="lookup", response={"rows": [{"a": 1}], "ok": True}
                    )
                ),
                role="user",
            ),
        ),
        Event(
            author="user",
            invocation_id="i3",
            content=_content(
                types.Part(inline_data=types.Blob(mime_type="image/png", data=bytes(range(256)))),
                role="user",
            ),
            input_transcription=types.Transcription(text="hello", finished=True),
            output_transcription=types.Transcription(text="hi"),
        ),
        Event(
            author="agent",
            invocation_id="i4",
            grounding_metadata=grounding,
            content=_content(types.Part(text="Sunny")),
            custom_metadata={"trace": {"ids": [1, 2]}, "ratio": 0.5},
            branch="root.child",
            partial=False,
        ),
        Event(
            author="agent",
            invocation_id="i5",
            actions=EventActions(
                state_delta={"k": {"deep": [1, "x"]}, "app:a": 1, "user:b": 2.0},
                artifact_delta={"report.txt": 3},
                transfer_to_agent="helper",
                escalate=True,
                skip_summarization=True,
                requested_tool_confirmations={
                    "c2": ToolConfirmation(hint="sure?", confirmed=False, payload={"x": 1})
                },
            ),
        ),
        Event(
            author="agent",
            invocation_id="i6",
            actions=EventActions(
                compaction=EventCompaction(
                    start_timestamp=1.0,
                    end_timestamp=2.5,
                    compacted_content=_content(types.Part(text="summary")),
                )
            ),
        ),
        Event(
            author="agent",
            invocation_id="i7",
            error_code="RESOURCE_EXHAUSTED",
            error_message="quota",
            finish_reason=types.FinishReason.MAX_TOKENS,
            interrupted=True,
            turn_complete=True,
        ),
    ]


@pytest.fixture
def sessions(services: YuxiServices) -> SqlSessionService:
    return services.session_service


async def _codecs(services: YuxiServices) -> list[Any]:
    async with services.store.read() as tx:
        rows = await tx.fetchall("SELECT fast_codec FROM yx_events ORDER BY sid, seq")
    return [row[0] for row in rows]


async def test_corpus_round_trips_through_the_fast_path(services: YuxiServices) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    appended = corpus()
    for event in appended:
        await sessions.append_event(session, event)
    assert await _codecs(services) == [None] * len(appended)  # an append only stores JSON
    for _read in ("validating and proving", "fast"):
        loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert loaded is not None
        assert loaded.events == appended
        for got, want in zip(loaded.events, appended, strict=True):
            assert strict_equal(got, want), want.invocation_id
        assert isinstance(loaded.events[1].finish_reason, types.FinishReason)
        assert loaded.events[2].long_running_tool_ids == {"c0", "c1"}
        await sessions._marks.settle()
        assert await _codecs(services) == [FAST_CODEC] * len(appended)


async def test_the_fast_path_can_be_switched_off(
    services: YuxiServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(_event_codec.FAST_EVENTS_ENV, "0")
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    appended = corpus()
    for event in appended:
        await sessions.append_event(session, event)
    for _read in range(2):
        loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert loaded is not None and loaded.events == appended
        await sessions._marks.settle()
    assert await _codecs(services) == [None] * len(appended)


async def test_each_call_hands_out_independent_events(sessions: SqlSessionService) -> None:
    session = await sessions.create_session(app_name=APP, user_id="u")
    for event in corpus():
        await sessions.append_event(session, event)
    first = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    second = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert first is not None and second is not None
    first.events[6].actions.state_delta["k"]["deep"].append("changed")
    first.events[0].content.parts[0].text = "changed"  # type: ignore[union-attr,index]
    first.events[2].long_running_tool_ids.add("c9")  # type: ignore[union-attr]
    assert second.events == corpus_like(second.events)
    assert second.events[6].actions.state_delta["k"]["deep"] == [1, "x"]
    assert second.events[0].content.parts[0].text == "你好"  # type: ignore[union-attr,index]
    assert second.events[2].long_running_tool_ids == {"c0", "c1"}


def corpus_like(events: list[Event]) -> list[Event]:
    """The corpus with the ids and timestamps of ``events`` (made at another time)."""
    out = []
    for made, event in zip(corpus(), events, strict=True):
        made.id, made.timestamp = event.id, event.timestamp
        out.append(made)
    return out


def unreproducible() -> list[Event]:
    """Events whose JSON does not read back as the original, whoever reads it."""
    auth = AuthConfig(
        auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": "X-Key"}),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(client_id="cid", client_secret="secret", scopes=["read"]),
        ),
    )
    # A str where an enum goes: assignment is not validated.
    assigned = Event(author="agent", invocation_id="i")
    assigned.finish_reason = "STOP"  # type: ignore[assignment]
    return [
        # A tuple dumps as a JSON list.
        Event(author="agent", invocation_id="i", custom_metadata={"pair": (1, 2)}),
        # ADK's AuthScheme union reads an APIKey back as a CustomAuthScheme.
        Event(
            author="agent",
            invocation_id="i",
            actions=EventActions(requested_auth_configs={"c1": auth}),
        ),
        assigned,
    ]


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
async def test_every_read_gives_what_adk_validation_makes_of_the_stored_json(
    services: YuxiServices,
) -> None:
    """Events whose JSON does not read back as appended: before and after marking, a
    read returns exactly what ``Event.model_validate_json`` makes of the row, and
    a row is marked only where the fast validator makes the same."""
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    odd = unreproducible()
    plain = Event(author="agent", invocation_id="i", content=_content(types.Part(text="ok")))
    for event in [*odd, plain]:
        await sessions.append_event(session, event)
    expected = [Event.model_validate_json(e.model_dump_json(exclude_none=True)) for e in odd]
    fast = _event_codec._fast()
    assert fast is not None
    provable = [
        strict_equal(fast[0].validate_json(e.model_dump_json(exclude_none=True)), full)
        for e, full in zip(odd, expected, strict=True)
    ]
    for _read in range(2):
        loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert loaded is not None
        for got, want in zip(loaded.events[:-1], expected, strict=True):
            assert strict_equal(got, want)
        assert strict_equal(loaded.events[-1], plain)
        assert loaded.events[0].custom_metadata == {"pair": [1, 2]}
        await sessions._marks.settle()
    marks = [FAST_CODEC if ok else None for ok in provable]
    assert await _codecs(services) == [*marks, FAST_CODEC]


async def test_unproven_events_take_the_validating_path(
    services: YuxiServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    monkeypatch.setattr(_event_codec, "strict_equal", lambda a, b: False)
    appended = corpus()
    for event in appended:
        await sessions.append_event(session, event)
    for _read in range(2):
        loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert loaded is not None
        for got, want in zip(loaded.events, appended, strict=True):
            assert got == want, want.invocation_id
        await sessions._marks.settle()
    assert await _codecs(services) == [None] * len(appended)


def _routed(data: str) -> str:
    """The row with its content replaced by ``message``, which only full validation
    routes (``Event._accept_convenience_kwargs``); the fast validator ignores it."""
    event = json.loads(data)
    del event["content"]
    event["message"] = "routed"
    return json.dumps(event)


async def test_rows_the_fast_validator_reads_differently_stay_unmarked(
    services: YuxiServices,
) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    for event in corpus()[:2]:
        await sessions.append_event(session, event)
    async with services.store.write() as tx:
        seq, data = (await tx.fetchall("SELECT seq, data FROM yx_events ORDER BY seq"))[0]
        await tx.execute(
            "UPDATE yx_events SET data = :data WHERE seq = :seq",
            {"data": _routed(data), "seq": seq},
        )
    for _read in range(2):
        loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert loaded is not None
        routed = loaded.events[0].content
        assert routed is not None and routed.parts is not None
        assert routed.parts[0].text == "routed"
        await sessions._marks.settle()
    assert await _codecs(services) == [None, FAST_CODEC]


async def test_rows_of_other_codecs_are_validated_in_full(services: YuxiServices) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    for event in corpus()[:2]:
        await sessions.append_event(session, event)
    async with services.store.write() as tx:
        rows = await tx.fetchall("SELECT seq, data FROM yx_events ORDER BY seq")
        for seq, data in rows:
            await tx.execute(
                "UPDATE yx_events SET data = :data, fast_codec = :codec WHERE seq = :seq",
                {
                    "data": _routed(data),
                    "codec": "elsewhere" if seq == 1 else FAST_CODEC,
                    "seq": seq,
                },
            )
    loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert loaded is not None
    routed = loaded.events[0].content
    assert routed is not None and routed.parts is not None
    assert routed.parts[0].text == "routed"
    assert loaded.events[1].content is None  # marked as proven: read fast, as written


async def test_marked_rows_the_fast_validator_rejects_are_validated_in_full(
    services: YuxiServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Rejecting:
        def validate_json(self, data: str) -> Any:
            raise ValidationError.from_exception_data("Event", [])

    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u")
    appended = corpus()
    for event in appended:
        await sessions.append_event(session, event)
    await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    await sessions._marks.settle()
    assert await _codecs(services) == [FAST_CODEC] * len(appended)
    monkeypatch.setattr(_event_codec, "_fast", lambda: (Rejecting(), Rejecting()))
    loaded = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert loaded is not None
    for got, want in zip(loaded.events, appended, strict=True):
        assert strict_equal(got, want), want.invocation_id


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (types.FinishReason.STOP, "STOP", False),
        ({"x": 1}, {"x": 1.0}, False),
        ([True], [1], False),
        ({"a"}, ["a"], False),
        ({1}, {True}, False),
        (b"ab", "ab", False),
        ((1, 2), [1, 2], False),
        ({"k": [1, {"n": None}]}, {"k": [1, {"n": None}]}, True),
        (types.Part(text="a"), types.Part(text="a"), True),
        (types.Part(text="a"), types.Part(text="b"), False),
    ],
)
def test_strict_equal_sees_types(a: object, b: object, same: bool) -> None:
    assert strict_equal(a, b) is same
    assert strict_equal(b, a) is same


@pytest.mark.parametrize("enabled", [True, False])
def test_decoding_restores_the_collector_state(enabled: bool) -> None:
    rows = [(_event_codec.encode_event(event), None) for event in corpus()]
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        events, proven = _event_codec.decode_events(rows)
        assert len(events) == len(rows) and proven == list(range(len(rows)))
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


async def test_marks_of_several_sessions_go_out_together(services: YuxiServices) -> None:
    """Reads of three sessions gather their marks into one batch; settling writes it
    and a later read of each takes the fast path to the same events."""
    sessions = services.session_service
    stored = []
    for user in ("u1", "u2", "u3"):
        session = await sessions.create_session(app_name=APP, user_id=user)
        appended = corpus()[:3]
        for event in appended:
            await sessions.append_event(session, event)
        stored.append((user, session.id, appended))
    for user, sid, _ in stored:
        assert await sessions.get_session(app_name=APP, user_id=user, session_id=sid)
    await sessions._marks.settle()
    assert await _codecs(services) == [FAST_CODEC] * 9
    for user, sid, appended in stored:
        loaded = await sessions.get_session(app_name=APP, user_id=user, session_id=sid)
        assert loaded is not None and loaded.events == appended


async def test_marks_of_a_long_session_are_split_into_bounded_statements(
    services: YuxiServices,
) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="long")
    count = 1_100  # more than two statements' worth of rows
    for i in range(count):
        await sessions.append_event(
            session,
            Event(
                author="user", content=types.Content(role="user", parts=[types.Part(text=str(i))])
            ),
        )
    loaded = await sessions.get_session(app_name=APP, user_id="long", session_id=session.id)
    assert loaded is not None and len(loaded.events) == count
    await sessions._marks.settle()
    assert await _codecs(services) == [FAST_CODEC] * count
