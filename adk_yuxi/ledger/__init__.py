"""The run ledger: every run recorded with its worker lease and outcome.

`LedgerPlugin` records each run of its App before it starts, renews the lease while the
run goes on and closes it with its outcome; `RunLedger` is the host's view (find a run,
list lapsed leases, `take_over` one explicitly); `SessionRuns` is a host's view of a
session (one run at a time, cancel requests, runs of dead workers closed as failed).
The plugin also carries what the base tools act on (waiting points, marks, access
repository, workspace).
"""

from ._errors import (
    LeaseExpired,
    LeaseHeld,
    LedgerError,
    RunEnded,
    RunInProgress,
    RunNotFound,
    RunWaiting,
    WorkerLeaseExpired,
)
from ._plugin import PLUGIN_NAME, ActiveRun, LedgerPlugin, WorkspaceRoot, ledger_plugin_of
from ._session_runs import SessionRuns
from ._store import LEASE_LAPSED, RUN_STATUSES, RunLedger, RunPage, RunRecord
from ._workspace import UnsafeUserId, per_user_workspaces, workspace_name

__all__ = [
    "LEASE_LAPSED",
    "PLUGIN_NAME",
    "RUN_STATUSES",
    "ActiveRun",
    "LeaseExpired",
    "LeaseHeld",
    "LedgerError",
    "LedgerPlugin",
    "RunEnded",
    "RunInProgress",
    "RunLedger",
    "RunNotFound",
    "RunPage",
    "RunRecord",
    "RunWaiting",
    "SessionRuns",
    "UnsafeUserId",
    "WorkerLeaseExpired",
    "WorkspaceRoot",
    "ledger_plugin_of",
    "per_user_workspaces",
    "workspace_name",
]
