"""Errors of the improvement marks."""

from __future__ import annotations

from adk_yuxi.errors import RunStopped, YuxiError

__all__ = ["MarkConflict", "MarkError", "MarkRefused"]


class MarkError(YuxiError):
    """Base class of the mark errors."""


class MarkConflict(MarkError):
    """The same (run, call) was already recorded with another reason; nothing changed."""

    def __init__(self, run_id: str, call_id: str) -> None:
        super().__init__(
            f"call {call_id!r} of run {run_id!r} already recorded a mark with another reason"
        )
        self.run_id = run_id
        self.call_id = call_id


class MarkRefused(MarkError, PermissionError):
    """A check made inside the mark's transaction failed; nothing was saved. `stop`
    is how the run ends because of it (a revoked right, a lease taken over)."""

    def __init__(self, stop: type[RunStopped], reason: str) -> None:
        super().__init__(f"{stop.CODE}: {reason}")
        self.stop = stop
        self.reason = reason
