"""A run's public error code, read from its ledger row's `error`.

One reading for every place that shows a run: the host API's runs, its streams'
final `run_status`, and the operator's `yuxi runs` commands.
"""

from __future__ import annotations

import re

from ._store import LEASE_LAPSED, RunRecord

__all__ = ["INTERNAL_ERROR", "error_code_of"]

INTERNAL_ERROR = "internal_error"

# How the ledger writes an error: "CODE: detail" for an error event (an upper-case code:
# the event's), "code: detail" or "code" for the host's own (lower case); an exception is
# "TypeName: message", which is no code.
_CODE = re.compile(r"(?:[A-Z][A-Z0-9_]*|[a-z][a-z0-9_]*)(?=: |$)")


def error_code_of(record: RunRecord) -> str | None:
    """The public code of a failed run (`internal_error` when its row names none);
    None for any other status."""
    if record.status != "failed":
        return None
    if record.error == LEASE_LAPSED:
        return LEASE_LAPSED
    found = _CODE.match(record.error or "")
    return found.group(0) if found is not None else INTERNAL_ERROR
