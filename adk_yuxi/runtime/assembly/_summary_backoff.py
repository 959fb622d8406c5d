"""No summary of the same history again right after one was given up.

A summary that failed (an error reply, an empty one, one no shorter than what it
replaces, a timeout) leaves the history uncompacted, so the prompt stays above the
threshold and ADK asks for a summary again after every later turn: each turn paid a
summarizer call that was discarded the same way. After a failure the next attempt at
the same history waits until that history has grown by half (in characters) or by
`RETRY_AFTER_EVENTS` events: more to summarize is what can make the next summary shorter
than what it replaces, and a passing failure of the model's host has then had a few
turns to clear. A compaction forced by a request the model refused as too long is never
deferred (`compaction_forced`): without it the turn fails.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from google.adk.events.event import Event

from ...guards import compaction_forced
from ._summary_checks import replaced_size

__all__ = ["GROWTH", "RETRY_AFTER_EVENTS", "SummaryBackoff"]

GROWTH = 1.5
"""How much larger (in characters) the history must be before a failed summary of it is
tried again."""
RETRY_AFTER_EVENTS = 10
"""Or how many more events it must have."""
_KEPT = 4096


@dataclass(frozen=True)
class _Failed:
    size: int
    events: int


def _history(events: Sequence[Event]) -> str:
    """What stays the same of a history while it grows: where it starts (the first event,
    or the previous summary ADK puts first)."""
    first = events[0]
    content = first.content.model_dump_json(exclude_none=True) if first.content else ""
    return f"{first.timestamp!r}:{hashlib.sha256(content.encode()).hexdigest()[:16]}"


class SummaryBackoff:
    """Remembers the failed summaries of each history (at most `_KEPT` histories) and says
    when another attempt at one is not worth its model call yet."""

    def __init__(self) -> None:
        self._failed: dict[str, _Failed] = {}

    def deferred(self, events: Sequence[Event]) -> str | None:
        """Why no summary of `events` is to be asked for now, or None."""
        if not events or compaction_forced():
            return None
        failed = self._failed.get(_history(events))
        if failed is None:
            return None
        size = replaced_size(events)
        if size >= failed.size * GROWTH or len(events) >= failed.events + RETRY_AFTER_EVENTS:
            return None
        return (
            f"the summary of this history failed at {failed.size:,} characters and"
            f" {failed.events} events; it is tried again at {int(failed.size * GROWTH):,}"
            f" characters or {failed.events + RETRY_AFTER_EVENTS} events (now {size:,},"
            f" {len(events)})"
        )

    def failed(self, events: Sequence[Event]) -> None:
        if not events:
            return
        key = _history(events)
        self._failed.pop(key, None)
        self._failed[key] = _Failed(replaced_size(events), len(events))
        while len(self._failed) > _KEPT:
            del self._failed[next(iter(self._failed))]

    def succeeded(self, events: Sequence[Event]) -> None:
        if events:
            self._failed.pop(_history(events), None)
