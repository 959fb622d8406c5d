"""A run's outcome as callers see it, read from one place: its run ledger row.

The run list, one run, and every stream's final `run_status` show the same `status`
and `error_code`, taken from the row the ledger plugin (or the host, for a run that
ended before the plugin began it) closed. The row's `error` keeps the detail for the
operator; a caller gets its code only.
"""

from __future__ import annotations

from typing import Any

from adk_yuxi.ledger import RunRecord
from adk_yuxi.ledger._outcome import INTERNAL_ERROR, error_code_of

__all__ = ["INTERNAL_ERROR", "NO_RUN", "error_code_of", "no_run_status", "run_status"]

NO_RUN = "none"
"""The `run_status` of a session that has no recorded run (it never ran here)."""


def run_status(record: RunRecord) -> dict[str, Any]:
    """The final frame of a stream of `record`'s run."""
    return {
        "status": record.status,
        "run_id": record.run_id,
        "invocation_id": record.invocation_id,
        "error_code": error_code_of(record),
    }


def no_run_status() -> dict[str, Any]:
    """The final frame of a followed session that has no recorded run: not `completed`
    (nothing completed), and no run to name."""
    return {"status": NO_RUN, "run_id": None, "invocation_id": None, "error_code": None}
