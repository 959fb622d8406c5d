"""Garbage-collector settings for a long-running server process.

A server process holds a large, long-lived heap (ADK, pydantic schemas, the app)
and makes many short-lived objects per request. With CPython's default thresholds
the collector runs every 700 net allocations and its older generations scan that
whole heap again and again; under load that was about a tenth of the host API's CPU
per turn. ``tune_for_serving`` moves everything alive at startup out of the
collector's sight (``gc.freeze``) and collects the young generation less often.
Figures: ``bench/README.md``, "bench_host_api".
"""

from __future__ import annotations

import gc

import click

__all__ = ["DEFAULT_GEN0_THRESHOLD", "GC_OPTION", "tune_for_serving"]

DEFAULT_GEN0_THRESHOLD = 50_000

GC_OPTION = click.option(
    "--gc-threshold",
    default=DEFAULT_GEN0_THRESHOLD,
    show_default=True,
    type=click.IntRange(min=0),
    hidden=True,  # a tuning knob for benchmarks, not a user setting
    help="Young-generation threshold of the garbage collector, with the startup heap"
    " frozen; 0 keeps CPython's defaults.",
)


def tune_for_serving(gen0_threshold: int = DEFAULT_GEN0_THRESHOLD) -> None:
    """Freezes the startup heap and sets the thresholds; 0 leaves CPython's defaults.

    Call it once the application is built, just before serving: what is frozen is
    never collected, so it should be what lives for the whole process.
    """
    if gen0_threshold < 0:
        raise ValueError("The collector threshold must be 0 (CPython's default) or more.")
    if gen0_threshold == 0:
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(gen0_threshold, 50, 100)
