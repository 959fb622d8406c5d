"""Compaction through the real Runner with the offline demo model: early facts stay
answerable, the request stays within the budget, nothing stored is lost, the answer is
streamed before any summary is written, and a failing summarizer fails nothing."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService
from google.genai import types
from pydantic import Field

from adk_yuxi.access import Role
from adk_yuxi.models import DemoLlm
from adk_yuxi.runtime import AgentConfig, Compaction, ContextPolicy, Toolbox, build_app
from adk_yuxi.sessions import SqlSessionService
from adk_yuxi.testing import ScriptedLlm

from ._kit import USER, Kit

FIRST = "My locker code is 4711."
SMALL = ContextPolicy(budget_tokens=1000, keep_recent_events=2)


class RecordingDemo(DemoLlm):
    """The demo model, keeping the size (in reported prompt tokens) of every request."""

    sizes: list[int] = Field(default_factory=list)
    contents: list[int] = Field(default_factory=list)

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> Any:
        self.contents.append(len(llm_request.contents))
        async for response in super().generate_content_async(llm_request, stream):
            assert response.usage_metadata is not None
            self.sizes.append(response.usage_metadata.prompt_token_count or 0)
            yield response


def _app(kit: Kit, policy: ContextPolicy, model: Any = None, **extra: Any) -> App:
    config = AgentConfig(name="a", tools=("echo",), context=policy)
    return build_app(
        config,
        kit.principal(role=Role.ADMIN),
        model=model or DemoLlm(),
        toolbox=Toolbox(registry=kit.registry),
        **extra,
    )


async def _turns(
    app: App, sessions: BaseSessionService, messages: list[str], session_id: str = "s"
) -> list[list[Event]]:
    runner = Runner(app=app, session_service=sessions)
    if await sessions.get_session(app_name=app.name, user_id=USER, session_id=session_id) is None:
        await sessions.create_session(app_name=app.name, user_id=USER, session_id=session_id)
    turns = []
    try:
        for message in messages:
            content = types.Content(role="user", parts=[types.Part(text=message)])
            turns.append(
                [
                    e
                    async for e in runner.run_async(
                        user_id=USER, session_id=session_id, new_message=content
                    )
                ]
            )
    finally:
        await runner.close()
    return turns


def _facts(n: int) -> list[str]:
    return [f"Fact {i}: the meeting room {i} is on floor {i % 7}." for i in range(n)]


def _text(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text or "" for p in parts)


def _answer(events: list[Event]) -> str:
    final = [e for e in events if e.is_final_response() and _text(e)]
    assert final, events
    return _text(final[-1])


def _compactions(events: list[Event]) -> list[Event]:
    return [e for e in events if e.actions.compaction is not None]


async def test_first_turn_recalled_after_several_compactions_on_sqlite(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    model = RecordingDemo()
    db = f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    said = [FIRST, *_facts(30)]
    async with SqlSessionService(db) as sessions:
        await _turns(_app(kit, SMALL, model), sessions, said)
    # A new process: everything said is still stored, the summaries with their ranges.
    async with SqlSessionService(db) as sessions:
        session = await sessions.get_session(app_name="a", user_id=USER, session_id="s")
        assert session is not None
        summaries = _compactions(session.events)
        assert len(summaries) >= 3
        users = [_text(e) for e in session.events if e.author == "user" and e.content]
        assert users == said  # nothing deleted
        first = session.events[0].timestamp
        for summary in summaries:
            compaction = summary.actions.compaction
            assert compaction is not None and compaction.compacted_content is not None
            assert compaction.start_timestamp == first  # rolling: from the start each time
            assert compaction.end_timestamp is not None
            assert first < compaction.end_timestamp < summary.timestamp
        # The model saw a summary and the newest events, not the whole history.
        assert model.contents[-1] < 12 < len(said)

        turns = await _turns(
            _app(kit, SMALL, model), sessions, ["What did I tell you about my locker code?"]
        )
    answer = _answer(turns[0])
    assert "4711" in answer and "summary" in answer


async def test_defaults_leave_a_short_conversation_alone(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    model = RecordingDemo()
    sessions = InMemorySessionService()
    app = _app(kit, ContextPolicy(), model)
    assert app.events_compaction_config is not None  # on by default
    await _turns(app, sessions, [FIRST, *_facts(15)])
    session = await sessions.get_session(app_name="a", user_id=USER, session_id="s")
    assert session is not None and not _compactions(session.events)
    assert model.contents[-1] == 31  # every earlier message and answer, and the new one


async def test_policy_off_never_compacts(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    model = RecordingDemo()
    sessions = InMemorySessionService()
    app = _app(kit, ContextPolicy(compaction=False, budget_tokens=1000), model)
    assert app.events_compaction_config is None
    await _turns(app, sessions, [FIRST, *_facts(20)])
    session = await sessions.get_session(app_name="a", user_id=USER, session_id="s")
    assert session is not None and not _compactions(session.events)
    assert max(model.sizes) > 1000  # the whole history, past the budget it would keep


async def test_request_stays_within_the_budget_as_history_grows(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    model = RecordingDemo()
    await _turns(_app(kit, SMALL, model), InMemorySessionService(), [FIRST, *_facts(60)])
    assert len(model.sizes) == 61
    assert max(model.sizes) <= SMALL.budget_tokens
    assert max(model.sizes[-20:]) <= SMALL.budget_tokens  # still bounded late on


async def test_answer_is_streamed_before_the_summary_is_written(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    order: list[str] = []
    gate = asyncio.Event()

    async def held(request: LlmRequest) -> str:
        order.append("summarizer called")
        await gate.wait()  # released only once the caller holds the answer
        return "Summary: the user's locker code is 4711."

    app = _app(kit, SMALL, capabilities=[Compaction(summarizer=ScriptedLlm([held] * 20))])
    sessions = InMemorySessionService()
    await sessions.create_session(app_name="a", user_id=USER, session_id="s")
    runner = Runner(app=app, session_service=sessions)

    async def turn(message: str) -> None:
        gate.clear()
        content = types.Content(role="user", parts=[types.Part(text=message)])
        async for event in runner.run_async(user_id=USER, session_id="s", new_message=content):
            if event.is_final_response() and event.author == "a":
                order.append("answer received")
                gate.set()

    try:
        for message in [FIRST, *_facts(12)]:
            await asyncio.wait_for(turn(message), timeout=20)
    finally:
        await runner.close()
    assert "summarizer called" in order
    first_summary = order.index("summarizer called")
    assert order[first_summary - 1] == "answer received"
    session = await sessions.get_session(app_name="a", user_id=USER, session_id="s")
    assert session is not None and _compactions(session.events)


@pytest.mark.parametrize("failure", ["raises", "hangs"])
async def test_a_failing_summarizer_leaves_the_history_and_says_why(
    failure: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    kit = Kit(tmp_path)

    async def broken(request: LlmRequest) -> str:
        if failure == "hangs":
            await asyncio.Event().wait()
        raise ConnectionError("summarizer host unreachable")

    policy = SMALL.model_copy(update={"summary_timeout_seconds": 0.05})
    app = _app(kit, policy, capabilities=[Compaction(summarizer=ScriptedLlm([broken] * 100))])
    sessions = InMemorySessionService()
    with caplog.at_level(logging.WARNING, logger="adk_yuxi.runtime.compaction"):
        turns = await _turns(app, sessions, [FIRST, *_facts(14)])
    assert all(_answer(t).startswith("(demo model)") for t in turns)  # every turn answered
    session = await sessions.get_session(app_name="a", user_id=USER, session_id="s")
    assert session is not None and not _compactions(session.events)
    assert len(session.events) == 2 * len(turns)
    reason = "summarizer host unreachable" if failure == "raises" else "no summary within 0.05 s"
    skipped = [r.getMessage() for r in caplog.records if "Compaction skipped" in r.getMessage()]
    assert skipped and all(reason in m for m in skipped)
