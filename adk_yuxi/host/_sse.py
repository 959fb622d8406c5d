"""Server-sent event frames: one per ADK event, then the run's final status."""

from __future__ import annotations

import json
import logging
from typing import Any

from google.adk.events import Event

from adk_yuxi.errors import RunStopped

__all__ = ["PUBLIC_FAILURE", "event_frame", "frame"]

log = logging.getLogger("adk_yuxi.host")
PUBLIC_FAILURE = "the run failed; the operator log has the details"


def _public_codes() -> frozenset[str]:
    """Codes whose event text is already one public sentence (every `RunStopped`)."""
    codes: set[str] = set()
    pending: list[type[RunStopped]] = [RunStopped]
    while pending:
        kind = pending.pop()
        codes.add(kind.CODE)
        pending.extend(kind.__subclasses__())
    return frozenset(codes)


def frame(event: str, data: Any, ident: str | None = None) -> bytes:
    lines = []
    if ident is not None:
        lines.append(f"id: {ident}")
    lines.append(f"event: {event}")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    lines.extend(f"data: {line}" for line in text.split("\n"))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def event_frame(event: Event) -> bytes:
    """The ADK event as ADK serialises it; its id is the cursor of the stream.

    An error text that is not one of ours (an exception's message, which may name
    paths or internals) is replaced by one public sentence and logged instead."""
    if event.error_message and event.error_code not in _public_codes():
        log.warning("run error %s: %s", event.error_code, event.error_message)
        event = event.model_copy(update={"error_message": PUBLIC_FAILURE})
    data = event.model_dump_json(exclude_none=True, by_alias=True)
    return frame("adk_event", data, ident=event.id)
