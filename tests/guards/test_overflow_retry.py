"""The retry after a context-length refusal keeps what plugins put into the refused
request: the retried request is rebuilt from the compacted session, and before, a
passage a plugin inserted (a retrieval result, a dynamic note) was dropped from it. Played
over the loopback OpenAI-compatible server with llama-cpp-python's refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_yuxi.access import Role
from adk_yuxi.guards._kept_contents import carried_over
from adk_yuxi.models import OpenAICompatibleLlm
from adk_yuxi.runtime import AgentConfig, ContextPolicy, Toolbox, build_app
from adk_yuxi.testing import ErrorReply, OpenAIScriptServer
from tests.conftest import final_texts
from tests.runtime._kit import USER, Kit

REFUSAL = ErrorReply(
    400, "Requested tokens (9120) exceed context window of 8192", "invalid_request_error"
)
PASSAGE = "Passage for this call: the blue room has a piano."


class PassagePlugin(BasePlugin):
    """Puts a passage just before the newest content of every request, as a retrieval
    plugin does."""

    def __init__(self) -> None:
        super().__init__(name="passage")

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        passage = types.Content(role="user", parts=[types.Part(text=PASSAGE)])
        llm_request.contents.insert(len(llm_request.contents) - 1, passage)
        return None


async def _talk(app: App, messages: list[str]) -> tuple[list[Event], list[Event]]:
    """The last turn's events and the session's stored events."""
    sessions = InMemorySessionService()
    runner = Runner(app=app, session_service=sessions)
    await sessions.create_session(app_name=app.name, user_id=USER, session_id="s")
    events: list[Event] = []
    try:
        for message in messages:
            content = types.Content(role="user", parts=[types.Part(text=message)])
            events = [
                e async for e in runner.run_async(user_id=USER, session_id="s", new_message=content)
            ]
    finally:
        await runner.close()
    session = await sessions.get_session(app_name=app.name, user_id=USER, session_id="s")
    assert session is not None
    return events, session.events


def _texts(body: dict[str, Any]) -> list[str]:
    return [json.dumps(m.get("content")) for m in body["messages"]]


@pytest.mark.parametrize("place", ["before the guards", "after the guards"])
async def test_the_retry_keeps_what_a_plugin_inserted(place: str, tmp_path: Path) -> None:
    chatter = [f"Tell me about room {i}: " + "it has chairs and a window. " * 12 for i in range(6)]
    script: list[Any] = [f"Room {i} noted." for i in range(6)]
    script += [REFUSAL, "The user described six rooms.", "Room 6 noted too."]
    kit = Kit(tmp_path)
    with OpenAIScriptServer(script, api_key="k") as server:
        model = OpenAICompatibleLlm(model="m", api_key="k", base_url=server.base_url)
        config = AgentConfig(name="a", tools=("echo",), context=ContextPolicy(keep_recent_events=2))
        toolbox = Toolbox(registry=kit.registry)
        app = build_app(config, kit.principal(role=Role.ADMIN), model=model, toolbox=toolbox)
        at = 0 if place == "before the guards" else len(app.plugins)
        app.plugins.insert(at, PassagePlugin())
        last, events = await _talk(app, [*chatter, "and room 6?"])
    assert not any(e.error_code for e in last)
    assert final_texts(last)[-1] == "Room 6 noted too."
    assert [e for e in events if e.actions.compaction is not None]
    refused, summary, retried = server.requests[6:9]
    assert "summar" in json.dumps(summary["messages"]).lower()
    assert len(retried["messages"]) < len(refused["messages"])
    sent = _texts(retried)
    # The passage once, where the plugin put it: just before the newest message.
    assert sum(PASSAGE in text for text in sent) == 1
    assert PASSAGE in sent[-2] and "and room 6?" in sent[-1]
    # The summary replaced the older rooms; the newest room stayed as it was.
    assert any("The user described six rooms." in text for text in sent)
    assert not any("room 0" in text for text in sent)


def _said(*texts: str) -> list[types.Content]:
    return [types.Content(role="user", parts=[types.Part(text=t)]) for t in texts]


def test_session_contents_come_as_compacted_and_the_request_s_own_keep_their_place() -> None:
    before = _said("old 1", "old 2", "recent", "newest")
    after = _said("summary of old 1 and 2", "recent", "newest")
    # A plugin put a note first and a passage before the newest, left "recent" out and
    # redacted "old 2" (which the summary now covers).
    request = _said("note", "old 1", "old 2 [redacted]", "passage", "newest")
    kept = carried_over(request, before, after)
    assert [c.parts[0].text for c in kept if c.parts] == [
        "note",
        "summary of old 1 and 2",
        "passage",
        "newest",
    ]


def test_an_edited_content_that_survived_the_compaction_is_sent_as_edited() -> None:
    before = _said("old", "newest secret")
    after = _said("summary", "newest secret")
    kept = carried_over(_said("old", "newest [redacted]"), before, after)
    assert [c.parts[0].text for c in kept if c.parts] == ["summary", "newest [redacted]"]
