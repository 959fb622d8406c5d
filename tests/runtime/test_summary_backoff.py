"""A summary given up is not asked for again after every later turn: the same history
is summarized again only once it has grown (by half, or by ten events). Counted as
requests to the loopback OpenAI-compatible server the summarizer talks to."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import Role
from adk_yuxi.models import OpenAICompatibleLlm
from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.testing import ErrorReply, OpenAIScriptServer

from ._kit import Kit
from .test_summary_failures import LOGGER, SMALL, _app, _facts, _summaries, _talk

TOO_LONG = "a very long summary " * 2000
REJECTED = ErrorReply(400, "the server is not ready", "invalid_request_error")


def _summarizer(server: OpenAIScriptServer) -> OpenAICompatibleLlm:
    return OpenAICompatibleLlm(
        model="m", api_key="k", base_url=server.base_url, probe_context=False
    )


@pytest.mark.parametrize("reply", [TOO_LONG, REJECTED], ids=["too-long", "rejected"])
async def test_a_failed_summary_is_not_retried_every_turn(
    reply: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with OpenAIScriptServer([reply] * 40, api_key="k") as server:
        app = _app(Kit(tmp_path), _summarizer(server))
        with caplog.at_level(logging.INFO, logger=LOGGER):
            events = await _talk(app, InMemorySessionService(), _facts(20), settle=True)
    assert _summaries(events) == []
    attempts = len(server.requests)
    deferred = [r for r in caplog.records if "Compaction deferred" in r.getMessage()]
    # Before: one discarded summary after every turn past the threshold (18 of 20).
    assert 2 <= attempts <= 5, attempts
    # Turns that start over the threshold are answered from a tail and compacted after
    # the run (`_deferred_compaction`); those attempts are deferred too.
    assert len(deferred) >= 3
    assert "it is tried again at" in deferred[0].getMessage()


async def test_the_summary_is_made_once_the_history_has_grown(tmp_path: Path) -> None:
    with OpenAIScriptServer([REJECTED, "The user listed rooms."] * 20, api_key="k") as server:
        events = await _talk(
            _app(Kit(tmp_path), _summarizer(server)),
            InMemorySessionService(),
            _facts(20),
            settle=True,
        )
    assert "The user listed rooms." in _summaries(events)
    # Every turn past the threshold asked before the backoff (18 of 20). With each
    # turn's summary landed before the next (`settle`: the count does not depend on the
    # machine's load), 8: ranges that failed once, asked again after they grew, and the
    # new ranges after each summary landed.
    assert 2 <= len(server.requests) <= 10, len(server.requests)


async def test_a_request_refused_for_length_is_compacted_whatever_failed_before(
    tmp_path: Path,
) -> None:
    """The refusal's compaction is not deferred: without it the turn fails for length."""
    summaries: list[Any] = [REJECTED, "The user described rooms."]
    asked: list[str] = []

    def reply(body: dict[str, Any]) -> Any:
        if "summar" in str(body["messages"][-1]).lower():  # the summarizer's prompt
            asked.append("summary")
            return summaries.pop(0) if summaries else "The user described rooms."
        if "room 6" in str(body["messages"][-1]) and "refused" not in asked:
            asked.append("refused")
            return ErrorReply(400, "Requested tokens (9120) exceed context window of 8192")
        return "Noted."

    chatter = [f"Room {i}: " + "it has chairs and a window. " * 30 for i in range(4)]
    with OpenAIScriptServer([reply] * 40, api_key="k", usage="estimate") as server:
        kit = Kit(tmp_path)
        config = AgentConfig(name="a", tools=("echo",), context=SMALL)
        toolbox = Toolbox(registry=kit.registry)
        principal = kit.principal(role=Role.ADMIN)
        app = build_app(config, principal, model=_summarizer(server), toolbox=toolbox)
        events = await _talk(app, InMemorySessionService(), [*chatter, "and room 6?"])
    refused = asked.index("refused")  # the refusal's compaction comes at once
    assert asked[:1] == ["summary"] and asked[refused + 1] == "summary", asked
    assert "The user described rooms." in _summaries(events)
