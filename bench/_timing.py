"""Timing helpers shared by the benchmarks: interleaved rounds, medians, ratios."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable

__all__ = ["format_table", "median_rate", "timed_rounds"]


async def timed_rounds(
    contenders: dict[str, Callable[[], Awaitable[int]]],
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
    collect: bool = False,
) -> dict[str, list[float]]:
    """Runs each contender once per round, interleaved so that machine noise (the other
    core busy, a CPU frequency change) hits every contender alike. Each contender returns
    how many operations it did; the result is seconds per operation for every round.
    `clock` is wall time by default; `time.process_time` counts this process's CPU only,
    which a machine shared with other work distorts less."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            if collect:
                gc.collect()
            start = clock()
            operations = await run()
            samples[name].append((clock() - start) / max(operations, 1))
    return samples


def median_rate(samples: list[float]) -> float:
    return statistics.median(samples)


def format_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    body = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])
