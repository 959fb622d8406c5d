"""Errors of the run ledger; the codes are what a host reports to its callers."""

from __future__ import annotations

from adk_yuxi.errors import RunStopped, YuxiError

__all__ = [
    "AnswerAlreadyResumed",
    "LeaseExpired",
    "LeaseHeld",
    "LedgerError",
    "NoLedger",
    "RunEnded",
    "RunInProgress",
    "RunNotFound",
    "RunWaiting",
    "WorkerLeaseExpired",
]


class LedgerError(YuxiError):
    """Base class of the run ledger errors."""

    code = "ledger_error"


class NoLedger(LedgerError):
    """The Runner's App has no `LedgerPlugin`: there is no ledger to claim a run in."""

    code = "no_ledger"


class RunNotFound(LedgerError, LookupError):
    code = "run_not_found"

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run {run_id!r} in the ledger")
        self.run_id = run_id


class LeaseHeld(LedgerError):
    """Another worker holds a live lease on the run."""

    code = "run_lease_held"

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} is held by another worker's live lease")
        self.run_id = run_id


class LeaseExpired(LedgerError):
    """The holder's lease lapsed; the run continues only after an explicit takeover."""

    code = "worker_lease_expired"

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"run {run_id!r}: the worker lease expired; take the run over explicitly"
            " (LedgerPlugin.take_over) before resuming it"
        )
        self.run_id = run_id


class RunInProgress(LedgerError):
    """The session has a run `running` under a live lease: one run at a time."""

    code = "run_in_progress"

    def __init__(self, session_id: str, run_id: str | None = None) -> None:
        super().__init__(f"session {session_id!r} has a run in progress")
        self.session_id = session_id
        self.run_id = run_id


class AnswerAlreadyResumed(LedgerError):
    """A resume whose answers the session already holds: the run went on with them once
    (it may wait at a newer point now), so they are not fed to it again."""

    code = "answer_already_resumed"

    def __init__(self, session_id: str, call_ids: list[str]) -> None:
        super().__init__(
            f"session {session_id!r} already holds the answer to call(s) {call_ids}: that"
            " resume ran once"
        )
        self.session_id = session_id
        self.call_ids = call_ids


class RunEnded(LedgerError):
    """The run is closed (completed, failed or cancelled): nothing more can change it."""

    code = "run_ended"

    def __init__(self, run_id: str, status: str) -> None:
        super().__init__(f"run {run_id!r} has ended ({status})")
        self.run_id = run_id
        self.status = status


class RunWaiting(LedgerError):
    """The session's run waits at a waiting point: answer it or cancel the run first."""

    code = "run_waiting"

    def __init__(self, session_id: str, run_id: str) -> None:
        super().__init__(
            f"session {session_id!r} has a run waiting at a waiting point:"
            " answer it or cancel the run before sending a new message"
        )
        self.session_id = session_id
        self.run_id = run_id


class WorkerLeaseExpired(RunStopped):
    """The run's lease was taken over by another worker while this one ran it; this
    worker's copy of the run ends at its next model call."""

    CODE = "WORKER_LEASE_EXPIRED"
    PUBLIC_TEXT = "another worker took this run over after its lease expired"
