"""Progress of a long ingest: a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
from typing import Protocol, TextIO

__all__ = ["IngestProgress", "TerminalProgress"]


class IngestProgress(Protocol):
    def stage(self, name: str, total: int) -> None: ...

    def advance(self, amount: int) -> None: ...

    def done(self) -> None: ...


class TerminalProgress:
    """A tqdm bar when ``stream`` is a terminal; otherwise one line per stage and per
    tenth of it, which reads well in logs and CI output."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self._label = label
        self._stream = stream or sys.stderr
        self._bar: object | None = None
        self._total = 0
        self._count = 0
        self._next_report = 0
        self._stage = ""

    def stage(self, name: str, total: int) -> None:
        self.done()
        self._stage, self._total, self._count = name, max(total, 0), 0
        self._next_report = max(self._total // 10, 1)
        if self._stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=self._total, desc=f"{self._label}: {name}", file=self._stream)
        else:
            print(f"{self._label}: {name} (0/{self._total})", file=self._stream, flush=True)

    def advance(self, amount: int) -> None:
        self._count += amount
        if self._bar is not None:
            self._bar.update(amount)  # type: ignore[attr-defined]
        elif self._count >= self._next_report and self._count < self._total:
            print(
                f"{self._label}: {self._stage} ({self._count}/{self._total})",
                file=self._stream,
                flush=True,
            )
            self._next_report += max(self._total // 10, 1)

    def done(self) -> None:
        if self._bar is not None:
            self._bar.close()  # type: ignore[attr-defined]
            self._bar = None
        elif self._stage:
            print(
                f"{self._label}: {self._stage} done ({self._count}/{self._total})",
                file=self._stream,
                flush=True,
            )
        self._stage = ""
