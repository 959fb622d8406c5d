"""Server-sent event frames: one per ADK event, then the run's final status."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from google.adk.events import Event

from ..observability._metrics import instruments
from ._public_errors import public_event

__all__ = ["HEARTBEAT", "counted", "event_frame", "frame"]

HEARTBEAT = b": heartbeat\n\n"
"""A comment line: keeps a quiet stream's connection open through proxies."""


def frame(event: str, data: Any, ident: str | None = None) -> bytes:
    lines = []
    if ident is not None:
        lines.append(f"id: {ident}")
    lines.append(f"event: {event}")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    lines.extend(f"data: {line}" for line in text.split("\n"))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def event_frame(event: Event) -> bytes:
    """The ADK event as ADK serialises it; its id is the cursor of the stream. An error
    event is sent as `public_event` words it (the host's plugin stored it so already;
    this covers events stored before or by another path)."""
    event = public_event(event) or event
    data = event.model_dump_json(exclude_none=True, by_alias=True)
    return frame("adk_event", data, ident=event.id)


async def counted(frames: AsyncIterator[bytes], kind: str) -> AsyncIterator[bytes]:
    """`frames`, counted in `yuxi.sse.active_streams` from the first frame asked for
    until the stream ends or the client goes (a response never sent is not counted)."""
    streams, attrs = instruments().sse_streams, {"yuxi.sse.kind": kind}
    streams.add(1, attrs)
    try:
        async for chunk in frames:
            yield chunk
    finally:
        streams.add(-1, attrs)
