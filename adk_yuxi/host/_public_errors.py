"""What a caller of the API is told of a failed run: the public sentence of its code.

A model host's failure text names the model, its URL and the variables to check: right
for the developer at `adk run` or `adk web`, wrong for a caller of the API (it tells an
outsider where the model lives and how it is configured). The host's plugin rewrites
such an event before ADK stores or yields it, so the session store never holds the
detail for an API run; the operator log has it (and the run ledger's row, which no
caller reads). The stream applies the same rewrite to what it sends, so events stored
before (or by another path) are told the same way in replays.
"""

from __future__ import annotations

import logging

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types
from typing_extensions import override

from adk_yuxi.errors import RunStopped
from adk_yuxi.models import model_error_text

__all__ = ["PUBLIC_FAILURE", "PublicErrorsPlugin", "public_event"]

log = logging.getLogger("adk_yuxi.host")
PUBLIC_FAILURE = "the run failed; the operator log has the details"


def _stop_codes() -> frozenset[str]:
    """Codes whose events carry one public sentence already (every `RunStopped`)."""
    codes: set[str] = set()
    pending: list[type[RunStopped]] = [RunStopped]
    while pending:
        kind = pending.pop()
        codes.add(kind.CODE)
        pending.extend(kind.__subclasses__())
    return frozenset(codes)


def public_event(event: Event) -> Event | None:
    """`event` as a caller may see it, or None when it is fine as it is.

    A model error of ours (`model_error_text` knows its code) becomes `[CODE] sentence`
    in text and message. Any other code keeps its content (what the model generated,
    e.g. a truncated answer) and gets the generic sentence as its message. A stop
    (`RunStopped`) is public by construction."""
    code = event.error_code
    if code is None or code in _stop_codes():
        return None
    sentence = model_error_text(code)
    if sentence is None:
        if event.error_message in (None, PUBLIC_FAILURE):
            return None
        return event.model_copy(update={"error_message": PUBLIC_FAILURE})
    content = event.content
    said = f"[{code}] {sentence}"
    if content is not None and [p.text for p in content.parts or ()] != [said]:
        content = types.Content(role=content.role, parts=[types.Part(text=said)])
    if content is event.content and event.error_message == sentence:
        return None
    return event.model_copy(update={"content": content, "error_message": sentence})


def _detail(event: Event) -> str:
    texts = [p.text for p in (event.content.parts or ()) if p.text] if event.content else []
    return event.error_message or " ".join(texts)


class PublicErrorsPlugin(BasePlugin):
    """Rewrites error events to their public sentence before they are stored, logging
    the detail. Registered after the ledger plugin (ADK stops at the first plugin that
    returns an event, and the ledger must see the event as it was); an agent tool's
    nested run inherits it, so the tool result its caller stores is public too."""

    def __init__(self) -> None:
        super().__init__(name="yuxi_public_errors")

    @override
    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        public = public_event(event)
        if public is not None:
            log.warning(
                "run error %s (invocation %s, agent %s): %s",
                event.error_code,
                invocation_context.invocation_id,
                event.author,
                _detail(event),
            )
        return public
