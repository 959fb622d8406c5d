"""Two costs of the session store (issue 29 §3), each as a ratio measured in this run.

1. Appending an event that carries a state delta, against the append floor: what any
   SQLite-backed append must do (``Event.model_dump_json``, one INSERT and a COMMIT on
   a stdlib connection, WAL, ``synchronous=NORMAL``). The two take turns event by
   event, timed in this process's CPU time (a shared machine's other work stretches
   wall time unevenly at this scale); the figure is the median ratio over runs.
   Target: at most 2.5x. The same without a state delta is printed beside it.
2. ``get_session`` of a 500-event session read ten times back to back (a busy host
   re-reading one session), against ADK's ``SqliteSessionService`` doing the same.
   The rows start unproven, as after the appends that made them; the reads never
   yield long enough for the fast path's background marks to land. Target: at most
   0.5x. The same once the marks have landed is printed beside it.

    python -m bench.bench_session_store [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

from adk_yuxi.sessions import SqlSessionService
from bench._timing import format_table

READS, SIZE = 10, 500
CLOCK = time.process_time


def events(n: int, delta: bool) -> list[Event]:
    return [
        Event(
            author="assistant" if i % 2 else "user",
            invocation_id=f"inv-{i // 2}",
            content=types.Content(
                role="model" if i % 2 else "user",
                parts=[types.Part(text=f"message {i}: a reply of a typical, modest length.")],
            ),
            actions=EventActions(state_delta={"step": i, "note": f"n{i}"} if delta else {}),
        )
        for i in range(n)
    ]


async def append_ratio(tmp: Path, run: int, n: int, delta: bool) -> float:
    """Median per-event time of the service over the floor's, taking turns."""
    sessions = SqlSessionService(f"sqlite+aiosqlite:///{tmp / f'append{run}{delta}.db'}")
    conn = sqlite3.connect(tmp / f"floor{run}{delta}.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, data TEXT NOT NULL)")
    session = await sessions.create_session(app_name="bench", user_id="u")
    originals = events(n, delta)
    copies = [event.model_copy(deep=True) for event in originals]  # untimed
    floor: list[float] = []
    ours: list[float] = []
    try:
        for event, copy in zip(originals, copies, strict=True):
            t0 = CLOCK()
            conn.execute("BEGIN")
            conn.execute(
                "INSERT INTO t (data) VALUES (?)", (event.model_dump_json(exclude_none=True),)
            )
            conn.execute("COMMIT")
            t1 = CLOCK()
            await sessions.append_event(session, copy)
            floor.append(t1 - t0)
            ours.append(CLOCK() - t1)
    finally:
        conn.close()
        await sessions.close()
    return statistics.median(ours) / statistics.median(floor)


async def reread_ms(tmp: Path, rounds: int) -> dict[str, float]:
    """Milliseconds for ten back-to-back reads: ADK, ours unproven, ours proven."""
    adk = SqliteSessionService(str(tmp / "adk.db"))
    ours = SqlSessionService(f"sqlite+aiosqlite:///{tmp / 'ours.db'}")
    sids = {}
    for name, service in (("adk", adk), ("ours", ours)):
        session = await service.create_session(app_name="bench", user_id="u")
        for event in events(SIZE, False):
            await service.append_event(session, event)
        sids[name] = session.id

    async def ten(service: SqliteSessionService | SqlSessionService, sid: str) -> float:
        start = time.perf_counter()
        for _ in range(READS):
            got = await service.get_session(app_name="bench", user_id="u", session_id=sid)
            assert got is not None and len(got.events) == SIZE
        return (time.perf_counter() - start) * 1e3

    async def unmark() -> None:
        await asyncio.sleep(0.3)  # any marks in flight land first
        await ours._store.write_one("UPDATE yx_events SET fast_codec = NULL")

    samples: dict[str, list[float]] = {"adk": [], "unproven": [], "proven": []}
    await ten(adk, sids["adk"])  # warm-up
    for _ in range(rounds):
        await unmark()
        samples["unproven"].append(await ten(ours, sids["ours"]))
        samples["adk"].append(await ten(adk, sids["adk"]))
        await asyncio.sleep(0.3)  # the marks land
        samples["proven"].append(await ten(ours, sids["ours"]))
    await ours.close()
    await adk.close()
    return {name: statistics.median(values) for name, values in samples.items()}


async def measure(quick: bool) -> list[list[str]]:
    tmp = Path(tempfile.mkdtemp(prefix="yuxi-store-"))
    runs, n = (3, 300) if quick else (5, 500)
    rows = []
    for delta in (True, False):
        ratios = [await append_ratio(tmp, run, n, delta) for run in range(runs)]
        label = "append with a state delta" if delta else "append without a state delta"
        target = "<= 2.5x" if delta else ""
        rows.append(
            [label, "floor: dump + INSERT + COMMIT", f"{statistics.median(ratios):.2f}x", target]
        )
    ms = await reread_ms(tmp, 3 if quick else 5)
    rows.append(
        [
            f"get_session x{READS}, {SIZE} events, unproven",
            f"ADK SqliteSessionService {ms['adk']:.1f} ms",
            f"{ms['unproven'] / ms['adk']:.2f}x ({ms['unproven']:.1f} ms)",
            "<= 0.5x",
        ]
    )
    rows.append(
        [
            f"get_session x{READS}, {SIZE} events, proven",
            f"ADK SqliteSessionService {ms['adk']:.1f} ms",
            f"{ms['proven'] / ms['adk']:.2f}x ({ms['proven']:.1f} ms)",
            "",
        ]
    )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer and shorter runs")
    args = parser.parse_args(argv)
    rows = asyncio.run(measure(args.quick))
    print(format_table(["measurement", "anchor", "ratio", "target"], rows))


if __name__ == "__main__":
    main()
