"""The context policy's event count (`compact_at_events`): a long conversation of small
turns, whose tokens stay far under the token threshold.

Through a user's `Runner` on SQLite with the ledger (as `bench_entry_points`' runner), a
new session runs `--turns` turns of four small events each (a question, a tool call, its
result, an answer: about 15 tokens an event). CPU time is counted for the whole run,
the compactions included (at the end of the runs that reach the count). Each
contender is a value of `compact_at_events`; `off` compacts by tokens only, which these
turns never reach. Reported: the mean CPU per turn over the run, the last tenth's mean
(where an uncompacted history is longest), both against the median turn on a new session
(7 turns after 3 of warm-up, same contender), and the summaries written.

    python -m bench.bench_event_count [--turns 200] [--counts 50,100,200,400,off] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from adk_yuxi.runtime import ContextPolicy
from bench._entry_kit import AGENT, USER, Player, entry_point
from bench._timing import format_table


async def _contender(work: Path, count: int | None, turns: int) -> list[str]:
    async with AsyncExitStack() as stack:
        policy = ContextPolicy(compact_at_events=count)
        turn = await entry_point("runner", work, Player(), stack, context=policy)
        news: list[float] = []
        for index in range(10):  # 3 warm-up turns, then the anchor
            timing = await turn.run(await turn.new_session())
            if index >= 3:
                news.append(timing[2])
        session_id = await turn.new_session()
        cpu: list[float] = []
        start = time.process_time()
        for _ in range(turns):
            before = time.process_time()
            await turn.run(session_id)
            cpu.append(time.process_time() - before)
        await stack.aclose()  # closes the runner's services: waits for compactions
        total = time.process_time() - start
    first = statistics.median(news)
    tail = statistics.mean(cpu[-max(turns // 10, 1) :])
    mean = total / turns
    return [
        "off" if count is None else str(count),
        f"{first * 1e3:,.1f}",
        f"{mean * 1e3:,.1f}",
        f"{mean / first:.2f}x",
        f"{tail * 1e3:,.1f}",
        f"{tail / first:.2f}x",
    ]


async def _summaries(work: Path) -> int:
    from adk_yuxi.storage import open_services

    services = open_services(f"sqlite+aiosqlite:///{work / 'yuxi.db'}")
    try:
        listed = await services.session_service.list_sessions(app_name=AGENT, user_id=USER)
        total = 0
        for found in listed.sessions:
            session = await services.session_service.get_session(
                app_name=AGENT, user_id=USER, session_id=found.id
            )
            assert session is not None
            total += sum(1 for e in session.events if e.actions and e.actions.compaction)
        return total
    finally:
        await services.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--counts", default="50,100,200,400,off")
    parser.add_argument("--quick", action="store_true", help="60 turns, 100 and off")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.counts = 60, "100,off"
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    root = Path(tempfile.mkdtemp(prefix="yuxi-count-"))
    rows = []
    for text in args.counts.split(","):
        count = None if text == "off" else int(text)
        work = root / f"{len(rows)}-{text}"
        work.mkdir()
        row = asyncio.run(_contender(work, count, args.turns))
        rows.append([*row, str(asyncio.run(_summaries(work)))])
    print(f"{args.turns} turns of 4 small events on one session (Runner, SQLite, ledger).")
    headers = [
        "compact_at_events",
        "new session ms",
        "CPU ms per turn",
        "x new session",
        "last tenth ms",
        "x new session",
        "summaries",
    ]
    print(format_table(headers, rows))


if __name__ == "__main__":
    main()
