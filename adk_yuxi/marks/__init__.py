"""Improvement marks: what `mark_for_improvement` records, and the query API over them."""

from ._errors import MarkConflict, MarkError, MarkRefused
from ._store import Check, Mark, MarkPage, MarkStore

__all__ = ["Check", "Mark", "MarkConflict", "MarkError", "MarkPage", "MarkRefused", "MarkStore"]
