"""The same cost under every entry point: a user's Runner, ADK's CLIs, the host API.

Times are the process's CPU time per turn (everything runs in this process, SQLite
included), which the shared machine distorts less than wall time. Two tables, each
from one run with interleaved rounds (medians):

1. **New session against plain ADK in memory.** A whole turn (a user message, a tool
   call and its result, a final answer: 2 model calls) at defaults on a new session,
   for a model that reports its prompt size as hosted models do and for one that
   reports none. Anchor: a plain `LlmAgent` with a `FunctionTool` on ADK's
   `InMemorySessionService`. Contenders: the `build_app` App at defaults on in-memory
   sessions (the runtime's cost), and through a user's `Runner` on `SqlSessionService`
   (SQLite) with the run ledger.
2. **Long sessions against the same entry point's new session.** Through (a) a user's
   `Runner.run_async` with no run config, (b) ADK's CLI construction from
   `--session_service_uri yuxi+sqlite:///…` and (c) the host API, a turn at each size
   of prior events (four per prior turn, inserted in bulk, never compacted before: the
   first turn compacts them, 10,000 events by the token threshold and 1,000 by the
   policy's event count), against that entry point's turn on a new session. Plain ADK
   in memory at the same sizes is printed beside, against its own new session. The
   first turn on each long session is untimed in the table and reported apart: the time
   to the answer, to the end of the run, and until its summary is stored (a turn that
   starts above the token threshold answers from the newest events that fit and the
   session is compacted after the run, in the background, which the bench waits for,
   untimed; one over the event count is compacted at the end of its run). The entry
   points' rounds interleave them, in reverse order every other round (which one
   follows which moved their anchors by 0.5 ms); plain ADK's rounds come after, and
   every contender runs one untimed new-session turn before its timed ones each round:
   a turn after plain ADK's 100 ms - 2 s turns cost up to 2 ms more CPU than after a
   light one, which inflated the anchor of the entry point measured next (the
   runner's, 5.4-8.3 ms against the CLI construction's 4.9-5.8 in the same runs, where
   interleaved alone in alternating order they cost the same, 5.5 and 5.6 ms) and
   flattered its ratio.

    python -m bench.bench_entry_points [--quick] [--sizes 1000,10000] [--rounds 5]
        [--entries runner,adk_cli,host]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from bench._entry_kit import Player, Turn, entry_point, plain_turns, yuxi_in_memory
from bench._history import turn_events
from bench._timing import format_table, median_rate

HEAVY = 5000
"""Plain ADK in memory at this size or more: one timed turn (seconds each), no warm-up."""


async def _new_session_turns(turn: Turn, count: int) -> float:
    total = 0.0
    for _ in range(count):
        session_id = await turn.new_session()
        total += (await turn.run(session_id))[2]
    return total / count


async def new_session_table(work: Path, rounds: int, turns: int) -> list[list[str]]:
    rows = []
    for report in (True, False):
        kind = "reports tokens" if report else "reports none"
        async with AsyncExitStack() as stack:
            (work / kind).mkdir(parents=True)
            contenders = {
                "plain ADK in memory": plain_turns(Player(report=report)),
                "Yuxi defaults, in-memory sessions": yuxi_in_memory(Player(report=report)),
                "Yuxi defaults, Runner on SQLite + ledger": await entry_point(
                    "runner", work / kind, Player(report=report), stack
                ),
            }
            for turn in contenders.values():  # warm-up
                await _new_session_turns(turn, 1)
            samples: dict[str, list[float]] = {name: [] for name in contenders}
            for _ in range(rounds):
                for name, turn in contenders.items():
                    samples[name].append(await _new_session_turns(turn, turns))
        anchor = median_rate(samples["plain ADK in memory"])
        for name, values in samples.items():
            seconds = median_rate(values)
            rows.append([kind, name, f"{seconds * 1e3:,.1f}", f"{seconds / anchor:.2f}x"])
    return rows


async def long_table(
    work: Path, sizes: list[int], rounds: int, entries: list[str]
) -> tuple[list[list[str]], list[list[str]]]:
    async with AsyncExitStack() as stack:
        turns: dict[str, Turn] = {"plain ADK in memory": plain_turns(Player())}
        for entry in entries:
            (work / entry).mkdir()
            turns[entry] = await entry_point(entry, work / entry, Player(), stack)
        cells: dict[tuple[str, int], str] = {}  # (entry, size) -> its long session
        first: list[list[str]] = []
        for name, turn in turns.items():
            for size in sizes:
                session_id = cells[name, size] = await turn.new_session()
                await turn.seed(session_id, [e for i in range(size // 4) for e in turn_events(i)])
                if name.startswith("plain") and size >= HEAVY:
                    continue
                start = time.perf_counter()
                answer, end, cpu = await turn.run(session_id)  # the first turn: may compact
                await turn.settle(session_id)  # a compaction after the run, untimed
                stored = time.perf_counter() - start
                first.append(
                    [
                        name,
                        f"{size:,}",
                        f"{answer * 1e3:,.0f}",
                        f"{end * 1e3:,.0f}",
                        f"{cpu * 1e3:,.0f}",
                        f"{stored * 1e3:,.0f}",
                    ]
                )
            await _new_session_turns(turn, 1)  # warm-up
        samples: dict[tuple[str, int], list[float]] = {key: [] for key in cells}
        samples |= {(name, 0): [] for name in turns}
        # Plain ADK's long turns (100 ms - 2 s) in rounds of their own, after the entry
        # points' interleaved rounds: see the module docstring.
        entries = [name for name in turns if not name.startswith("plain")]
        for phase in (entries, [name for name in turns if name not in entries]):
            for index in range(rounds):
                for name in phase if index % 2 == 0 else phase[::-1]:
                    turn = turns[name]
                    await _new_session_turns(turn, 1)  # untimed warm-up
                    samples[name, 0].append(await _new_session_turns(turn, 1))
                    for size in sizes:
                        if name.startswith("plain") and size >= HEAVY and index > 0:
                            continue
                        samples[name, size].append((await turn.run(cells[name, size]))[2])
    rows = []
    for name in turns:
        anchor = median_rate(samples[name, 0])
        for size in [0, *sizes]:
            seconds = median_rate(samples[name, size])
            label = "new session" if size == 0 else f"{size:,} events"
            rows.append([name, label, f"{seconds * 1e3:,.1f}", f"{seconds / anchor:.2f}x"])
    return rows, first


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=5, help="new-session turns per round")
    parser.add_argument("--entries", default="runner,adk_cli,host")
    parser.add_argument("--quick", action="store_true", help="3 rounds, 1,000 events only")
    parser.add_argument("--skip-new", action="store_true", help="only the long-session table")
    parser.add_argument("--skip-long", action="store_true", help="only the new-session table")
    args = parser.parse_args(argv)
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    rounds = 3 if args.quick else args.rounds
    work = Path(tempfile.mkdtemp(prefix="yuxi-entry-"))
    if not args.skip_new:
        rows = asyncio.run(new_session_table(work / "new", rounds, args.turns))
        print("Whole turn on a new session (2 model calls + 1 tool call), against plain ADK.")
        print(format_table(["model", "contender", "CPU ms per turn", "x plain ADK"], rows))
    if args.skip_long:
        return
    entries = args.entries.split(",")
    (work / "long").mkdir(parents=True)
    rows, first = asyncio.run(long_table(work / "long", sizes, rounds, entries))
    print("\nWhole turn at N prior events, against the same entry point's new session.")
    print(format_table(["entry point", "session", "CPU ms per turn", "x new session"], rows))
    print("\nThe first turn on each long session (compacts a history above the threshold).")
    print(
        format_table(
            ["entry point", "prior events", "ms to answer", "ms to end", "CPU ms", "ms to summary"],
            first,
        )
    )


if __name__ == "__main__":
    main()
