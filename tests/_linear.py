"""A linear-time check for parsers of untrusted text: the same pathological shape at n and
4n characters, timed in CPU seconds (best of a few runs), the larger allowed about 6x the
smaller (4x is linear) plus a small floor, so scheduling noise never fails it while a
quadratic parser (16x) or worse does."""

from __future__ import annotations

import time
from collections.abc import Callable

SMALL = 100_000
"""The smaller input, in characters: the issue asks for at least 100 KB."""

RATIO = 6.0
FLOOR_S = 0.02
"""CPU seconds added to the bound: a parse of 100 KB in string operations takes a few
milliseconds, where one scheduler tick is already a sizeable share."""


def cpu_seconds(run: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def assert_linear(parse: Callable[[str], object], shape: Callable[[int], str]) -> None:
    """`parse` on `shape(n)` and `shape(4n)`; `shape(n)` must be about n characters."""
    small, large = shape(SMALL), shape(4 * SMALL)
    assert len(small) >= SMALL and len(large) >= 4 * SMALL
    parse(small)  # warm up: imports, caches
    t_small = cpu_seconds(lambda: parse(small))
    t_large = cpu_seconds(lambda: parse(large))
    assert t_large <= RATIO * t_small + FLOOR_S, (
        f"{len(large)} chars took {t_large:.4f}s CPU, {len(small)} took {t_small:.4f}s:"
        f" {t_large / max(t_small, 1e-9):.1f}x for 4x the input"
    )
