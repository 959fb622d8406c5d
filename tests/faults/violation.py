"""What a rule reports: the broken promise in words, and the sessions, runs and waiting
points involved (what the report shortens the history to)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Violation", "violation"]


@dataclass(frozen=True)
class Violation:
    rule: str
    message: str
    sessions: frozenset[str] = field(default_factory=frozenset)
    runs: frozenset[str] = field(default_factory=frozenset)
    points: frozenset[str] = field(default_factory=frozenset)
    until: float | None = None  # when it was seen: the shortened history reaches it


def violation(
    rule: str,
    message: str,
    *,
    sessions: Sequence[str | None] = (),
    runs: Sequence[str | None] = (),
    points: Sequence[str | None] = (),
    until: float | None = None,
) -> Violation:
    return Violation(
        rule,
        message,
        frozenset(s for s in sessions if s),
        frozenset(r for r in runs if r),
        frozenset(p for p in points if p),
        until,
    )
