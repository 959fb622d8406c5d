"""SQL services against ADK's own services and a raw aiosqlite loop, in one run.

Run: ``python -m bench.bench_sql_services [--quick] [--no-postgres]``.

Every figure is measured in this run on this machine; ratios compare against the
anchor named in each section (ADK's faster service, the raw aiosqlite commit loop,
FileArtifactService), never against stored numbers. Setup work (filling tables
for the list and search measurements) is not timed; where ADK's own API would
take minutes to fill a table, rows are inserted with plain SQL in its schema.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite
from google.adk.artifacts.file_artifact_service import FileArtifactService
from google.adk.events.event import Event
from google.adk.memory._sqlite_memory_service import SqliteMemoryService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

from adk_yuxi.storage import open_services

PG_URL = os.environ.get("YUXI_BENCH_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
Row = tuple[str, str, str]
rows: list[Row] = []


def report(section: str, name: str, value: float, unit: str, anchor: float | None) -> None:
    ratio = f"{value / anchor:6.2f}x" if anchor else "anchor"
    rows.append((section, f"{name:<34} {value:>12,.1f} {unit:<10}", ratio))
    print(f"{section:<26} {name:<34} {value:>12,.1f} {unit:<10} {ratio}", flush=True)


def make_events(n: int) -> list[Event]:
    return [
        Event(
            author="assistant" if i % 2 else "user",
            invocation_id=f"inv-{i // 2}",
            content=types.Content(
                role="model" if i % 2 else "user",
                parts=[types.Part(text=f"message {i}: a reply of a typical, modest length.")],
            ),
        )
        for i in range(n)
    ]


async def timed(func: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await func()
    return time.perf_counter() - start


async def append_rate(service: Any, events: list[Event]) -> float:
    session = await service.create_session(app_name="bench", user_id="u")

    copies = [event.model_copy(deep=True) for event in events]  # untimed

    async def run() -> None:
        for event in copies:
            await service.append_event(session, event)

    return len(events) / await timed(run)


async def raw_loop_rate(path: Path, events: list[Event]) -> float:
    payloads = [e.model_dump_json(exclude_none=True) for e in events]
    async with aiosqlite.connect(path) as db:
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, data TEXT NOT NULL)")
        await db.commit()

        async def run() -> None:
            for payload in payloads:
                await db.execute("INSERT INTO t (data) VALUES (?)", (payload,))
                await db.commit()

        return len(payloads) / await timed(run)


async def floor_and_ours_us(path: Path, service: Any, events: list[Event]) -> tuple[float, float]:
    """Median microseconds per event: the append floor and ``service``, taking turns.

    The floor is what any SQLite-backed append must do: ``Event.model_dump_json``,
    one INSERT and a COMMIT on a stdlib connection (WAL, ``synchronous=NORMAL``).
    The two take turns event by event, into a session growing to ``len(events)``,
    so load on the shared machine falls on both alike; each figure is the median
    over the events, which the shared machine's stalls do not move.
    """
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, data TEXT NOT NULL)")
    session = await service.create_session(app_name="bench", user_id="floor")
    copies = [event.model_copy(deep=True) for event in events]  # untimed
    floor: list[float] = []
    ours: list[float] = []
    try:
        for event, copy in zip(events, copies, strict=True):
            t0 = time.perf_counter()
            conn.execute("BEGIN")
            conn.execute(
                "INSERT INTO t (data) VALUES (?)", (event.model_dump_json(exclude_none=True),)
            )
            conn.execute("COMMIT")
            t1 = time.perf_counter()
            await service.append_event(session, copy)
            floor.append(t1 - t0)
            ours.append(time.perf_counter() - t1)
    finally:
        conn.close()
    return statistics.median(floor) * 1e6, statistics.median(ours) * 1e6


async def filled_session(service: Any, n: int) -> Callable[[], Awaitable[Any]]:
    """A session of `n` events in `service`, and the call that loads it."""
    session = await service.create_session(app_name="bench", user_id="u")
    for event in make_events(n):
        await service.append_event(session, event)

    def load() -> Awaitable[Any]:
        return service.get_session(app_name="bench", user_id="u", session_id=session.id)

    return load


async def interleaved_ms(
    loaders: dict[str, Callable[[], Awaitable[Any]]], rounds: int
) -> dict[str, float]:
    """Median milliseconds per load, contenders taking turns round by round so that
    machine noise falls on all of them alike."""
    samples: dict[str, list[float]] = {name: [] for name in loaders}
    for load in loaders.values():
        await load()  # warm-up: caches, prepared statements
    for _ in range(rounds):
        for name, load in loaders.items():
            samples[name].append(await timed(load))
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


def fill_adk_sqlite_sessions(path: Path, n: int) -> None:
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO sessions VALUES ('bench', ?, ?, '{}', ?, ?)",
            [(f"u{i % 100}", f"s{i}", 1e9 + i, 1e9 + i) for i in range(n)],
        )


def fill_adk_database_sessions(path: Path, n: int) -> None:
    stamp = datetime.fromtimestamp(1e9, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time)"
            " VALUES ('bench', ?, ?, '{}', ?, ?)",
            [(f"u{i % 100}", f"s{i}", stamp, stamp) for i in range(n)],
        )


async def fill_ours(services: Any, n: int) -> None:
    async with services.store.write() as tx:
        await tx.executemany(
            "INSERT INTO yx_sessions (app_name, user_id, session_id, state, revision,"
            " create_time, update_time) VALUES ('bench', :u, :s, "
            + ("CAST(:st AS JSONB)" if services.store.backend == "postgresql" else ":st")
            + ", 0, :t, :t)",
            [{"u": f"u{i % 100}", "s": f"s{i}", "st": "{}", "t": 1e9 + i} for i in range(n)],
        )


async def list_ms(service: Any, repeats: int) -> float:
    samples = [await timed(lambda: service.list_sessions(app_name="bench")) for _ in range(repeats)]
    return statistics.median(samples) * 1000


_EN = [
    "database",
    "migration",
    "weather",
    "report",
    "travel",
    "budget",
    "garden",
    "music",
    "coffee",
    "meeting",
]
_ZH = ["数据库", "迁移", "天气", "报告", "旅行", "预算", "花园", "音乐", "咖啡", "会议"]


def memory_events(n: int) -> list[Event]:
    out = []
    for i in range(n):
        words = [_EN[(i * 7 + k) % 10] for k in range(4)] + [
            _ZH[(i * 3 + k) % 10] for k in range(3)
        ]
        out.append(
            Event(
                author="user",
                invocation_id="m",
                content=types.Content(
                    role="user", parts=[types.Part(text=f"{i} " + " ".join(words))]
                ),
            )
        )
    return out


async def search_ms(service: Any, queries: list[str]) -> float:
    samples = []
    for query in queries * 3:
        samples.append(
            await timed(
                lambda q=query: service.search_memory(app_name="bench", user_id="u0", query=q)
            )
        )
    return statistics.median(samples) * 1000


async def bench_memory(
    ours: Any, adk: Any, n: int, label: str, with_adk: bool, anchor: float | None = None
) -> float | None:
    events = memory_events(n)
    users = 10
    for user in range(users):
        chunk = events[user::users]
        for start in range(0, len(chunk), 2000):
            batch = chunk[start : start + 2000]
            await ours.add_events_to_memory(
                app_name="bench", user_id=f"u{user}", events=batch, session_id="s"
            )
            if with_adk:
                await adk.add_events_to_memory(
                    app_name="bench", user_id=f"u{user}", events=batch, session_id="s"
                )
    queries = ["database migration", "天气 报告", "coffee", "音乐会议", "garden budget"]
    if with_adk:
        anchor = await search_ms(adk, queries)
        report(
            "memory search (ms, median)", f"ADK SqliteMemoryService {n:,}", anchor or 0, "ms", None
        )
    report(
        "memory search (ms, median)",
        f"SqlMemoryService {label} {n:,}",
        await search_ms(ours, queries),
        "ms",
        anchor,
    )
    return anchor


async def artifact_rates(service: Any, size: int, count: int) -> tuple[float, float]:
    # Distinct payloads, so content deduplication cannot skip writes.
    payloads = [os.urandom(size) for _ in range(count)]
    kw = {"app_name": "bench", "user_id": "u", "session_id": "s"}

    async def save() -> None:
        for i in range(count):
            await service.save_artifact(
                filename=f"f{i % 10}",
                artifact=types.Part(
                    inline_data=types.Blob(mime_type="application/octet-stream", data=payloads[i])
                ),
                **kw,
            )

    async def load() -> None:
        for i in range(count):
            await service.load_artifact(filename=f"f{i % 10}", **kw)

    return count / await timed(save), count / await timed(load)


async def run(quick: bool, postgres: bool) -> None:
    n_append = 1000 if quick else 3000
    n_sessions = 3000 if quick else 10_000
    n_memory = 20_000 if quick else 100_000
    tmp = Path(tempfile.mkdtemp(prefix="yuxi-bench-"))
    events = make_events(n_append)

    sec = "append (events/s)"
    raw = await raw_loop_rate(tmp / "raw.db", events)
    adk_sqlite = SqliteSessionService(str(tmp / "adk_sqlite.db"))
    adk_db = DatabaseSessionService(f"sqlite+aiosqlite:///{tmp / 'adk_db.db'}")
    adk_fast = max(
        await append_rate(adk_sqlite, events[:300]), await append_rate(adk_db, events[:300])
    )
    ours = open_services(f"sqlite+aiosqlite:///{tmp / 'ours.db'}")
    ours_rate = await append_rate(ours.session_service, events)
    report(sec, "raw aiosqlite commit loop", raw, "events/s", None)
    report(sec, "ADK faster service (300 events)", adk_fast, "events/s", None)
    report(sec, "SqlSessionService sqlite vs ADK", ours_rate, "events/s", adk_fast)
    report(sec, "SqlSessionService sqlite vs raw", ours_rate, "events/s", raw)
    floor_runs = [
        await floor_and_ours_us(tmp / f"floor{i}.db", ours.session_service, events[:500])
        for i in range(3 if quick else 5)
    ]
    floor_us, ours_us = sorted(floor_runs, key=lambda run: run[1] / run[0])[len(floor_runs) // 2]
    sec = "append cost vs floor (µs/event)"
    report(sec, "floor: dump + INSERT + COMMIT", floor_us, "µs/event", None)
    report(sec, "SqlSessionService sqlite", ours_us, "µs/event", floor_us)
    sec = "append (events/s)"
    pg = open_services(f"{PG_URL}?schema=yx_bench_{uuid.uuid4().hex[:8]}") if postgres else None
    if pg is not None:
        report(
            sec,
            "SqlSessionService postgresql",
            await append_rate(pg.session_service, events),
            "events/s",
            raw,
        )

    sec = "get_session (ms, median of interleaved rounds)"
    for n in (500, 5000):
        contenders = {
            "adk_sqlite": adk_sqlite,
            "adk_db": adk_db,
            "ours": ours.session_service,
        }
        if pg is not None:
            contenders["pg"] = pg.session_service
        loaders = {name: await filled_session(svc, n) for name, svc in contenders.items()}
        ms = await interleaved_ms(loaders, 15 if n == 500 else 5)
        anchor = min(ms["adk_sqlite"], ms["adk_db"])
        report(sec, f"ADK SqliteSessionService {n}", ms["adk_sqlite"], "ms", None)
        report(sec, f"ADK DatabaseSessionService {n}", ms["adk_db"], "ms", None)
        report(sec, f"SqlSessionService sqlite {n}", ms["ours"], "ms", anchor)
        if "pg" in ms:
            report(sec, f"SqlSessionService postgresql {n}", ms["pg"], "ms", anchor)

    sec = f"list_sessions {n_sessions:,} (ms)"
    fill_adk_sqlite_sessions(tmp / "adk_sqlite.db", n_sessions)
    fill_adk_database_sessions(tmp / "adk_db.db", n_sessions)
    adk_list = min(await list_ms(adk_sqlite, 3), await list_ms(adk_db, 3))
    report(sec, "ADK faster service", adk_list, "ms", None)
    await fill_ours(ours, n_sessions)
    report(sec, "SqlSessionService sqlite", await list_ms(ours.session_service, 3), "ms", adk_list)
    if pg is not None:
        await fill_ours(pg, n_sessions)
        report(
            sec,
            "SqlSessionService postgresql",
            await list_ms(pg.session_service, 3),
            "ms",
            adk_list,
        )

    adk_memory = SqliteMemoryService(tmp / "adk_memory.db")
    memory_anchor = await bench_memory(ours.memory_service, adk_memory, n_memory, "sqlite", True)
    if pg is not None:
        await bench_memory(
            pg.memory_service, adk_memory, n_memory, "postgresql", False, memory_anchor
        )

    files = FileArtifactService(tmp / "files")
    for size, count in ((4 * 1024, 200 if quick else 500), (8 * 1024 * 1024, 10 if quick else 30)):
        label = f"{size // 1024} KiB" if size < 1 << 20 else f"{size >> 20} MiB"
        f_save, f_load = await artifact_rates(files, size, count)
        o_save, o_load = await artifact_rates(ours.artifact_service, size, count)
        sec = f"artifacts {label} (ops/s)"
        report(sec, "FileArtifactService save", f_save, "ops/s", None)
        report(sec, "SqlArtifactService sqlite save", o_save, "ops/s", f_save)
        report(sec, "FileArtifactService load", f_load, "ops/s", None)
        report(sec, "SqlArtifactService sqlite load", o_load, "ops/s", f_load)
        if pg is not None:
            p_save, p_load = await artifact_rates(pg.artifact_service, size, count)
            report(sec, "SqlArtifactService postgresql save", p_save, "ops/s", f_save)
            report(sec, "SqlArtifactService postgresql load", p_load, "ops/s", f_load)

    await ours.close()
    await adk_db.close()
    await adk_sqlite.close()
    await adk_memory.close()
    if pg is not None:
        schema = pg.store.options["schema"]
        async with pg.store.write() as tx:
            await tx.execute(f"DROP SCHEMA {schema} CASCADE")
        await pg.close()
    print("\n| section | measurement | ratio |\n|---|---|---|")
    for section, line, ratio in rows:
        print(f"| {section} | `{line.strip()}` | {ratio} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a few minutes)")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL figures")
    args = parser.parse_args(argv)
    asyncio.run(run(args.quick, not args.no_postgres))


if __name__ == "__main__":
    main()
