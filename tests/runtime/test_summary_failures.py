"""A summary that failed is never stored: the summarizer's model answering with an error
body (a real HTTP 400 over the loopback OpenAI-compatible server), with nothing, or with
a summary longer than what it replaces leaves the history uncompacted and says why; a
summarizer that cancels itself does not cancel the turn, a cancelled turn still is."""

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
from google.genai import types

from adk_yuxi.access import Role
from adk_yuxi.models import DemoLlm, OpenAICompatibleLlm
from adk_yuxi.runtime import AgentConfig, Compaction, ContextPolicy, Toolbox, build_app
from adk_yuxi.runtime.assembly._deferred_compaction import DeferredCompactionPlugin
from adk_yuxi.testing import EmptyReply, ErrorReply, OpenAIScriptServer, ScriptedLlm

from ._kit import USER, Kit

SMALL = ContextPolicy(budget_tokens=1000, keep_recent_events=2)
LOGGER = "adk_yuxi.runtime.compaction"


def _facts(n: int) -> list[str]:
    return [f"Fact {i}: the meeting room {i} is on floor {i % 7}." for i in range(n)]


def _app(kit: Kit, summarizer: Any, policy: ContextPolicy = SMALL) -> App:
    config = AgentConfig(name="a", tools=("echo",), context=policy)
    principal = kit.principal(role=Role.ADMIN)
    return build_app(
        config,
        principal,
        model=DemoLlm(),
        toolbox=Toolbox(registry=kit.registry),
        capabilities=[Compaction(summarizer=summarizer)],
    )


async def _talk(
    app: App, sessions: InMemorySessionService, messages: list[str], *, settle: bool = False
) -> list[Event]:
    """The messages as back-to-back turns; with `settle`, each turn's background
    summary lands before the next turn starts (a count of summaries that does not
    depend on how busy the machine is)."""
    runner = Runner(app=app, session_service=sessions)
    deferred = [p for p in app.plugins if isinstance(p, DeferredCompactionPlugin)]
    await sessions.create_session(app_name=app.name, user_id=USER, session_id="s")
    answered = []
    try:
        for message in messages:
            content = types.Content(role="user", parts=[types.Part(text=message)])
            events = [
                e async for e in runner.run_async(user_id=USER, session_id="s", new_message=content)
            ]
            answered.append(any(e.is_final_response() and e.content for e in events))
            if settle:
                for plugin in deferred:
                    await plugin.settle()
    finally:
        await runner.close()
    assert all(answered)
    session = await sessions.get_session(app_name=app.name, user_id=USER, session_id="s")
    assert session is not None
    return session.events


def _summaries(events: list[Event]) -> list[str]:
    found = []
    for event in events:
        compaction = event.actions.compaction
        if compaction is not None and compaction.compacted_content is not None:
            parts = compaction.compacted_content.parts or []
            found.append("".join(p.text or "" for p in parts))
    return found


def _skipped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "Compaction skipped" in r.getMessage()]


@pytest.mark.parametrize(
    "reply",
    [
        ErrorReply(400, "the request exceeds the available context size", "invalid_request_error"),
        EmptyReply(),
        EmptyReply(refusal="I cannot help with that."),
        "[MODEL_REJECTED] The model 'm' at http://host/v1 failed: HTTP 400",
    ],
    ids=["error-body", "empty", "refusal", "error-text"],
)
async def test_a_failed_summary_is_never_stored(
    reply: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with OpenAIScriptServer([reply] * 40, api_key="k") as server:
        summarizer = OpenAICompatibleLlm(
            model="m", api_key="k", base_url=server.base_url, probe_context=False
        )
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            events = await _talk(
                _app(Kit(tmp_path), summarizer), InMemorySessionService(), _facts(20)
            )
    assert server.requests, "the summarizer was asked"
    assert _summaries(events) == []
    assert _skipped(caplog)


async def test_a_summary_longer_than_what_it_replaces_is_discarded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with OpenAIScriptServer(["a very long summary " * 2000] * 40, api_key="k") as server:
        summarizer = OpenAICompatibleLlm(
            model="m", api_key="k", base_url=server.base_url, probe_context=False
        )
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            events = await _talk(
                _app(Kit(tmp_path), summarizer), InMemorySessionService(), _facts(20)
            )
    assert server.requests
    assert _summaries(events) == []
    assert any("not shorter than what it replaces" in m for m in _skipped(caplog))


async def test_a_good_summary_is_still_stored(tmp_path: Path) -> None:
    with OpenAIScriptServer(["The user listed meeting rooms."] * 40, api_key="k") as server:
        summarizer = OpenAICompatibleLlm(
            model="m", api_key="k", base_url=server.base_url, probe_context=False
        )
        events = await _talk(_app(Kit(tmp_path), summarizer), InMemorySessionService(), _facts(20))
    assert "The user listed meeting rooms." in _summaries(events)


async def test_a_summarizer_that_cancels_itself_fails_no_turn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def cancelled(request: LlmRequest) -> str:
        raise asyncio.CancelledError

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        events = await _talk(
            _app(Kit(tmp_path), ScriptedLlm([cancelled] * 40)),
            InMemorySessionService(),
            _facts(20),
        )
    assert _summaries(events) == []
    assert any("cancelled (the turn was not)" in m for m in _skipped(caplog))


async def test_cancelling_the_turn_cancels_its_summary(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def hangs(request: LlmRequest) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    sessions = InMemorySessionService()
    app = _app(Kit(tmp_path), ScriptedLlm([hangs] * 40))
    talk = asyncio.create_task(_talk(app, sessions, _facts(40)))
    await asyncio.wait_for(started.wait(), 60)
    talk.cancel()
    with pytest.raises(asyncio.CancelledError):
        await talk


async def test_a_summary_too_long_for_the_model_is_made_of_the_newer_half(
    tmp_path: Path,
) -> None:
    """Once the history outgrew the model, its summary request was refused too: the
    session stayed too long for every request. The summary is made again over the newer
    half, and covers the whole range."""
    refused = ErrorReply(400, "Requested tokens (9120) exceed context window of 8192")
    with OpenAIScriptServer([refused, "Rooms on floors."] * 20, api_key="k") as server:
        summarizer = OpenAICompatibleLlm(
            model="m", api_key="k", base_url=server.base_url, probe_context=False
        )
        events = await _talk(_app(Kit(tmp_path), summarizer), InMemorySessionService(), _facts(20))
    assert "Rooms on floors." in _summaries(events)
    first, second = (len(str(r["messages"])) for r in server.requests[:2])
    assert second < first
    [stored, *_] = [e for e in events if e.actions.compaction is not None]
    assert stored.actions.compaction is not None
    assert stored.actions.compaction.start_timestamp == events[0].timestamp
