"""Parsed events of recently read sessions, so a turn parses only what is new.

A session's turn reads the same events again and again (a window of them, or all of
them before the first compaction) and parsing them was most of the read. A stored
event row never changes (its ``data`` is written once; only the ``fast_codec`` hint
is updated) and its key never comes back (``(sid, seq)``, with session row ids never
reused), so an event parsed from row ``(sid, seq)`` is that row's event for as long
as the row exists, in any process. The row's ``event_id`` is checked too, which
keeps a wrong hit out even if the database behind the service is replaced.

Only reads made for a run (``read_for_a_run``: ADK's Runner reading the session to
run a turn) share: they get shallow copies (``model_copy``), so a caller that assigns
a field of an event (``event.content = ...``) changes its copy only, while nested
values (the content's parts, the actions' dicts) are the cache's. ADK copies a history
event before it changes anything inside it (``_contents``, ``_rearranger``) and this
package does not change them; ``tests/sessions/test_event_cache.py`` runs turns over
cached events and checks them against their rows. Sharing is the point: parsed
events that stay alive across turns are not made again, nor walked again by the
cyclic collector, on every turn. Every other read (listing, export, a caller's own
``get_session``) parses its rows afresh, so no two of them share an object.

The cache holds the events of the sessions read last, at most ``max_events`` in all;
a session's entry is replaced by what its latest whole or windowed read returned, so
events below a new window floor leave it. ``max_events=0`` turns it off.
"""

from __future__ import annotations

import gc
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, cast

from google.adk.events.event import Event

from ._event_codec import decode_events
from ._fast_marks import FastMarks

__all__ = ["DEFAULT_MAX_EVENTS", "EventCache", "handed_out", "read_events"]

DEFAULT_MAX_EVENTS = 5_000
"""About 6 KB a parsed event of an ordinary turn (measured with tracemalloc): 30 MB at
most, five uncompacted sessions of 1,000 events or hundreds of compacted windows."""


class EventCache:
    """Events by session row and seq, for the sessions read last."""

    def __init__(self, max_events: int = DEFAULT_MAX_EVENTS) -> None:
        if max_events < 0:
            raise ValueError("max_events must be 0 (off) or more.")
        self.max_events = max_events
        self._sessions: OrderedDict[int, dict[int, Event]] = OrderedDict()
        self._size = 0

    def known(self, row_id: int) -> dict[int, Event]:
        """The cached events of session row `row_id` by seq (empty if none); the
        caller checks each hit's id against its row."""
        found = self._sessions.get(row_id)
        if found is None:
            return {}
        self._sessions.move_to_end(row_id)
        return found

    def keep(self, row_id: int, events: dict[int, Event]) -> None:
        """Replaces session row `row_id`'s events with `events` (the cache's own
        objects: never hand them out), then drops the least recently read sessions
        past the limit."""
        if self.max_events == 0:
            return
        old = self._sessions.pop(row_id, None)
        if old is not None:
            self._size -= len(old)
        if not events or len(events) > self.max_events:
            return
        self._sessions[row_id] = events
        self._size += len(events)
        while self._size > self.max_events:
            _, dropped = self._sessions.popitem(last=False)
            self._size -= len(dropped)

    @property
    def size(self) -> int:
        """How many events the cache holds."""
        return self._size


def handed_out(event: Event) -> Event:
    """What a read returns for a cached event: a shallow copy (see the module doc)."""
    return event.model_copy()


def read_events(
    cache: EventCache, marks: FastMarks, row_id: int, rows: Sequence[Any], *, shared: bool
) -> list[Event]:
    """The events of `rows` (``(seq, data, fast_codec, event_id)`` of session row
    `row_id`, in seq order), with their fast-path proofs scheduled. `shared`: a whole or
    windowed read made for a run, which reuses the cached events (as shallow copies) and
    becomes the session's cache entry; any other read parses every row afresh."""
    known = cache.known(row_id) if shared and cache.max_events else {}
    events: list[Event | None] = []
    misses: list[int] = []
    for index, (seq, _, _, event_id) in enumerate(rows):
        hit = known.get(int(seq))
        if hit is not None and hit.id == event_id:
            events.append(hit)
        else:
            events.append(None)
            misses.append(index)
    if misses:
        seqs = [int(rows[index][0]) for index in misses]
        codecs = marks.pending_codecs(row_id, seqs, [rows[index][2] for index in misses])
        decoded, proven = decode_events(
            [(rows[index][1], codec) for index, codec in zip(misses, codecs, strict=True)]
        )
        marks.schedule(row_id, [seqs[index] for index in proven])
        for index, event in zip(misses, decoded, strict=True):
            events[index] = event
    found = cast(list[Event], events)
    if not (shared and cache.max_events):
        return found
    cache.keep(row_id, {int(row[0]): event for row, event in zip(rows, found, strict=True)})
    collecting = gc.isenabled()
    gc.disable()  # as in `decode_events`: every copy survives the collector's passes
    try:
        return [handed_out(event) for event in found]
    finally:
        if collecting:
            gc.enable()
