"""How long the dense side of a query is skipped after it failed: a search keeps
answering (lexically) while an embedding endpoint is down or an index cannot be built,
without paying for the failure again on every question."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

__all__ = ["Backoff"]

FIRST_SECONDS = 5.0
LONGEST_SECONDS = 300.0


class Backoff:
    """Failures by key: a key that failed is skipped for `first` seconds, twice as long
    after each failure in a row, up to `longest`; a success forgets it."""

    def __init__(
        self,
        first: float = FIRST_SECONDS,
        longest: float = LONGEST_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.first = first
        self.longest = longest
        self._clock = clock
        self._failed: dict[Hashable, tuple[float, int]] = {}  # key: (retry at, failures)

    def waiting(self, key: Hashable) -> bool:
        """True while `key` is skipped."""
        entry = self._failed.get(key)
        return entry is not None and self._clock() < entry[0]

    def failed(self, key: Hashable) -> float:
        """Records a failure of `key`; returns the seconds it is skipped for."""
        now = self._clock()
        # Keys whose wait ended long ago are forgotten (a base's old index labels).
        for stale in [k for k, (at, _) in self._failed.items() if at + self.longest < now]:
            del self._failed[stale]
        _, count = self._failed.get(key, (0.0, 0))
        wait = min(self.longest, self.first * 2.0**count)
        self._failed[key] = (now + wait, count + 1)
        return wait

    def succeeded(self, key: Hashable) -> None:
        self._failed.pop(key, None)
