"""A reply with nothing in it is said to be one.

ADK marks a model reply without content (`MODEL_RETURNED_NO_CONTENT`) but gives the
event no text, so `adk run` prints nothing and the turn ends silently. This plugin gives
such an event one line for the user; the OpenAI-compatible model says the same of its
own empty replies (`MODEL_EMPTY_REPLY`) before ADK sees them. The event is changed in
place, so the plugins after this one (the host's public errors) still see it.
"""

from __future__ import annotations

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types
from typing_extensions import override

from .._adk import NO_CONTENT_ERROR_CODE

__all__ = ["EMPTY_REPLY_PLUGIN_NAME", "EMPTY_REPLY_TEXT", "EmptyReplyPlugin"]

EMPTY_REPLY_PLUGIN_NAME = "yuxi_empty_reply"
EMPTY_REPLY_TEXT = "The model sent an empty reply; ask again or rephrase."


def _shown(event: Event) -> bool:
    parts = event.content.parts if event.content and event.content.parts else []
    return any(p.text and p.text.strip() and not p.thought for p in parts)


class EmptyReplyPlugin(BasePlugin):
    """Gives ADK's no-content error event a text the user reads."""

    def __init__(self, name: str = EMPTY_REPLY_PLUGIN_NAME) -> None:
        super().__init__(name=name)

    @override
    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        if event.error_code == NO_CONTENT_ERROR_CODE and not _shown(event):
            text = f"[{NO_CONTENT_ERROR_CODE}] {EMPTY_REPLY_TEXT}"
            event.content = types.Content(role="model", parts=[types.Part(text=text)])
        return None
