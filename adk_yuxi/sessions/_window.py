"""Windowed session reads: where a turn's read of the session may start.

ADK builds the model's contents from every event of the session, but once a
compaction summary covers the start of the history (``event.actions.compaction``
with a start and end timestamp), the events it covers contribute nothing: the
summary stands in for them. A read that starts at the first event still needed
gives the model exactly the same contents and costs O(window), not O(history).

Which event is the first one still needed is decided once, when a compaction
event is appended, from the events of the Session it is appended to (by
induction those are every event that still matters): the *floor*. It is stored
on the compaction's row (``yx_events.window_floor``) and found again by index.
An event is still needed ("alive") unless it is covered by a compaction that
every agent sees (no branch, no isolation scope) and cannot come back:

* a raw event whose timestamp is inside a kept summary's range, whose function
  calls all have their response, whose invocation waits on no call (a paused run
  is resumed by its invocation id), and that holds no call ADK would re-inject (ADK
  restores a compacted call whose response survives);
* an older summary that a kept one contains (ADK drops it too).

Rewinds and isolation-scoped events (task agents) look back past any summary, so
they store a floor of 0: the next reads are full reads until a later summary
whose floor accounts for them. See ``docs/design/session-window.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session

__all__ = ["SessionWindow", "stored_floor", "wants_window", "window_floor"]

FULL_READ = 0
"""The floor that means "read every event"."""


class SessionWindow(GetSessionConfig):
    """Read the session from its latest compaction on (plus what the model still needs).

    Pass it as ``RunConfig(get_session_config=SessionWindow())``: the Runner gives it
    to ``get_session``, and ``SqlSessionService`` then reads only the events the
    model's contents are built from (exactly the contents a full read builds). Other
    session services see a plain ``GetSessionConfig`` without limits and read all
    events. ``num_recent_events`` and ``after_timestamp``, if set too, narrow it further.
    """

    from_latest_compaction: bool = True


def wants_window(config: GetSessionConfig | None) -> bool:
    return isinstance(config, SessionWindow) and config.from_latest_compaction


def _anchor_range(event: Event) -> tuple[float, float] | None:
    """The range of a summary every agent sees, or None."""
    compaction = event.actions.compaction if event.actions else None
    if compaction is None or compaction.compacted_content is None:
        return None
    start, end = compaction.start_timestamp, compaction.end_timestamp
    if start is None or end is None or math.isnan(start) or math.isnan(end):
        return None
    if event.branch or event.isolation_scope:
        return None
    return start, end


def _looks_back(event: Event) -> bool:
    """Events whose effect on the contents reaches before any summary."""
    return bool(event.isolation_scope) or bool(
        event.actions and event.actions.rewind_before_invocation_id
    )


def event_floor(event: Event) -> int | None:
    """The floor stored for an ordinary (non-summary) event: 0 or none."""
    return FULL_READ if _looks_back(event) else None


def _kept(ranges: list[tuple[int, float, float]]) -> list[tuple[int, float, float]]:
    """ADK's rule: a containing range supersedes the ranges it contains."""
    kept: set[int] = set()
    max_end: float | None = None
    for index, _, end in sorted(ranges, key=lambda r: (r[1], -r[2], -r[0])):
        if max_end is None or end > max_end:
            kept.add(index)
            max_end = end
    return [r for r in ranges if r[0] in kept]


def _covered(coverage: list[tuple[float, float]], ts: float) -> bool:
    return any(start <= ts <= end for start, end in coverage)


def window_floor(events: Sequence[Event], first_seq: int, summary: Event) -> int | None:
    """The floor for `summary`, appended after `events` (the first at `first_seq`).

    None if `summary` is not a summary every agent sees (the previous floor stays).
    """
    own = _anchor_range(summary)
    if own is None:
        return None
    every = [*events, summary]
    if any(_looks_back(event) for event in every):
        return FULL_READ
    ranges = [
        (index, *found)
        for index, event in enumerate(every)
        if (found := _anchor_range(event)) is not None
    ]
    kept = _kept(ranges)
    kept_at = {index for index, _, _ in kept}
    coverage = sorted((start, end) for _, start, end in kept if start <= end)
    long_running = _long_running(every)
    answered = {
        response.id
        for event in every
        for response in event.get_function_responses()
        if response.id and (event.author == "user" or response.id not in long_running)
    }
    alive = [
        _alive(event, index in kept_at, coverage, kept, answered)
        for index, event in enumerate(events)
    ]
    _keep_calls_of_alive_responses(events, alive)
    _keep_paused_invocations(events, alive, answered)
    first = next((index for index, needed in enumerate(alive) if needed), len(events))
    return first_seq + first


def _long_running(events: Sequence[Event]) -> set[str]:
    return {call_id for event in events for call_id in (event.long_running_tool_ids or ())}


def _alive(
    event: Event,
    kept: bool,
    coverage: list[tuple[float, float]],
    ranges: list[tuple[int, float, float]],
    answered: set[str],
) -> bool:
    compaction = event.actions.compaction if event.actions else None
    if compaction is not None:
        if kept:
            return True
        start, end = compaction.start_timestamp, compaction.end_timestamp
        if start is None or end is None or compaction.compacted_content is None:
            return False  # ADK skips it
        # A summary no everyone-visible summary contains is read by someone.
        return not any(s <= start and end <= e for _, s, e in ranges)
    if not _covered(coverage, event.timestamp):
        return True
    return any(call.id not in answered for call in event.get_function_calls())


def _keep_paused_invocations(
    events: Sequence[Event], alive: list[bool], answered: set[str]
) -> None:
    """An invocation waiting on a call is resumed by invocation id: ADK then looks for
    its events, so all of them stay."""
    waiting = {
        event.invocation_id
        for event in events
        if any(call.id not in answered for call in event.get_function_calls())
    }
    if waiting:
        for index, event in enumerate(events):
            if event.invocation_id in waiting:
                alive[index] = True


def _keep_calls_of_alive_responses(events: Sequence[Event], alive: list[bool]) -> None:
    """ADK re-injects a compacted call whose response is in the contents."""
    latest_call: dict[str, int] = {}
    owner: list[set[int]] = [set() for _ in events]
    for index, event in enumerate(events):
        for call in event.get_function_calls():
            if call.id:
                latest_call[call.id] = index
        for response in event.get_function_responses():
            if response.id and response.id in latest_call:
                owner[index].add(latest_call[response.id])
    for index in range(len(events)):
        if alive[index]:
            for call_index in owner[index]:
                alive[call_index] = True


def stored_floor(session: Session, event: Event, revision: int, first: int | None) -> int | None:
    """The window floor stored with `event`, appended to `session` (at `revision`,
    holding every event from seq `first` on, if `first` is known)."""
    if not (event.actions and event.actions.compaction):
        return event_floor(event)
    if first is None or len(session.events) != revision - first + 1:
        return None  # not every event from `first` on: no floor can be proven
    return window_floor(session.events, first, event)
