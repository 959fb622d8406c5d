"""The run ledger: every run recorded with its worker lease and outcome.

`LedgerPlugin` records each run of its App before it starts, renews the lease while the
run goes on and closes it with its outcome; `RunLedger`, the one class over the runs
table, is the host's view (find a run, list lapsed leases, `take_over` one explicitly;
a session's runs one at a time, cancel requests, runs of dead workers closed as failed);
`resume_waitpoint` resumes a run paused at a waiting point, claimed first
(`answer_and_resume` records its answer under that claim). Every claim
is made before ADK stores anything of the run: a closed run never runs again
(`RunEnded`), a running one runs once (`LeaseHeld`), a lapsed one goes on only after
an explicit `take_over`.
The plugin also carries what the base tools act on (waiting points, marks, access
repository, workspace).
"""

from ._errors import (
    AnswerAlreadyResumed,
    LeaseExpired,
    LeaseHeld,
    LedgerError,
    NoLedger,
    RunEnded,
    RunInProgress,
    RunNotFound,
    RunWaiting,
    WorkerLeaseExpired,
)
from ._plugin import PLUGIN_NAME, ActiveRun, LedgerPlugin, WorkspaceRoot, ledger_plugin_of
from ._resume import answer_and_resume, resume_waitpoint
from ._store import LEASE_LAPSED, RUN_STATUSES, RunLedger, RunPage, RunRecord
from ._workspace import UnsafeUserId, per_user_workspaces, workspace_name

__all__ = [
    "LEASE_LAPSED",
    "PLUGIN_NAME",
    "RUN_STATUSES",
    "ActiveRun",
    "AnswerAlreadyResumed",
    "LeaseExpired",
    "LeaseHeld",
    "LedgerError",
    "LedgerPlugin",
    "NoLedger",
    "RunEnded",
    "RunInProgress",
    "RunLedger",
    "RunNotFound",
    "RunPage",
    "RunRecord",
    "RunWaiting",
    "UnsafeUserId",
    "WorkerLeaseExpired",
    "WorkspaceRoot",
    "answer_and_resume",
    "ledger_plugin_of",
    "per_user_workspaces",
    "resume_waitpoint",
    "workspace_name",
]
