"""A run's public error code, read from its ledger row: one reading for every place that
shows a run (the host API's runs and final `run_status`, the operator's `yuxi runs`)."""

from __future__ import annotations

from ._codes import INTERNAL_ERROR, run_error_code
from ._store import RunRecord

__all__ = ["INTERNAL_ERROR", "error_code_of"]


def error_code_of(record: RunRecord) -> str | None:
    """The public code of a failed run (`internal_error` when its row names none);
    None for any other status."""
    return run_error_code(record.status, record.error)
