"""The per-invocation budget of calls that went wrong, and the event that ends a run past it.

One budget is spent by every guard that answers a broken call (a malformed call
repaired, an invalid final answer sent back) so a model that keeps failing stops after
a known number of round trips, whichever way it fails.
"""

from __future__ import annotations

from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ..errors import YuxiError

__all__ = ["REPAIR_BUDGET_EXHAUSTED", "RepairBudget", "RepairBudgetExhausted"]

REPAIR_BUDGET_EXHAUSTED = "REPAIR_BUDGET_EXHAUSTED"

RUNS_KEPT = 4096
"""Per-run entries kept at most: a run ADK cancels ends with no callback, so the oldest
entries are dropped past this bound instead of growing without one."""


def remember(table: dict[str, Any], invocation_id: str, value: Any) -> None:
    """`table[invocation_id] = value`, dropping the oldest runs past `RUNS_KEPT`."""
    table[invocation_id] = value
    while len(table) > RUNS_KEPT:
        del table[next(iter(table))]


class RepairBudgetExhausted(YuxiError):
    """How a host recognises the event that ended a run past its repair budget."""

    CODE = REPAIR_BUDGET_EXHAUSTED

    @staticmethod
    def is_event(event: object) -> bool:
        return getattr(event, "error_code", None) == REPAIR_BUDGET_EXHAUSTED


class RepairBudget:
    """Counts repairs per invocation; `limit` of them are answered, the next ends the run."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("the repair budget cannot be negative")
        self.limit = limit
        self._spent: dict[str, int] = {}
        self._why: dict[str, str] = {}

    def spend(self, invocation_id: str, why: str) -> int:
        """Records one repair; returns how many this invocation has used, this one included."""
        count = self._spent.get(invocation_id, 0) + 1
        remember(self._spent, invocation_id, count)
        remember(self._why, invocation_id, why)
        return count

    def spent(self, invocation_id: str) -> int:
        return self._spent.get(invocation_id, 0)

    def exhausted(self, invocation_id: str) -> bool:
        return self._spent.get(invocation_id, 0) > self.limit

    def stop_response(self, invocation_id: str) -> LlmResponse:
        """The error response that ends the run through ADK's own path (no function call,
        so the flow treats it as final)."""
        reason = (
            f"the model needed more than {self.limit} repairs in this run (last:"
            f" {self._why.get(invocation_id, 'unknown')})"
        )
        return LlmResponse(
            content=types.Content(
                role="model", parts=[types.Part(text=f"This run was stopped: {reason}.")]
            ),
            error_code=REPAIR_BUDGET_EXHAUSTED,
            error_message=reason,
            turn_complete=True,
        )

    def end(self, invocation_id: str) -> None:
        self._spent.pop(invocation_id, None)
        self._why.pop(invocation_id, None)
