"""The public code of a closed run's `error` text: one rule for what a host's callers
see (`run_status`) and for the metrics (`yuxi.runs` by `error.type`)."""

from __future__ import annotations

import re

__all__ = ["INTERNAL_ERROR", "LEASE_LAPSED", "run_error_code"]

LEASE_LAPSED = "worker_lease_expired"
"""The `error` of a run closed because its worker's lease lapsed."""
INTERNAL_ERROR = "internal_error"

# How the ledger writes an error: "CODE: detail" for an error event (an upper-case code:
# the event's), "code: detail" or "code" for the host's own (lower case); an exception is
# "TypeName: message", which is no code.
_CODE = re.compile(r"(?:[A-Z][A-Z0-9_]*|[a-z][a-z0-9_]*)(?=: |$)")


def run_error_code(status: str, error: str | None) -> str | None:
    """The code of a failed run (`internal_error` when its text names none); None for
    any other status."""
    if status != "failed":
        return None
    if error == LEASE_LAPSED:
        return LEASE_LAPSED
    found = _CODE.match(error or "")
    return found.group(0) if found is not None else INTERNAL_ERROR
