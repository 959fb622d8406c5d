"""Renders ADK events as a readable transcript for terminals and logs."""

from __future__ import annotations

import json
from typing import Any

from google.adk.events.event import Event

__all__ = ["format_event"]


def _compact(value: Any, limit: int = 200) -> str:
    rendered = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return rendered if len(rendered) <= limit else rendered[: limit - 1] + "…"


def format_event(event: Event) -> list[str]:
    """One line per meaningful part; partial (streaming) chunks render nothing."""
    if event.partial or event.content is None or not event.content.parts:
        return []
    lines: list[str] = []
    for part in event.content.parts:
        if part.function_call is not None:
            call = part.function_call
            lines.append(f"  → {event.author} calls {call.name}({_compact(call.args or {})})")
        elif part.function_response is not None:
            response = part.function_response
            lines.append(f"  ← {response.name} returned {_compact(response.response)}")
        elif part.text and not part.thought:
            speaker = "user" if event.author == "user" else event.author
            lines.append(f"{speaker}: {part.text.strip()}")
    return lines
