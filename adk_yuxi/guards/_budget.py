"""Where the guards charge a repair, and the stand-alone budget for apps without the runtime.

Every guard that answers a broken call (a malformed call repaired, an invalid final
answer sent back) charges one ledger, so a model that keeps failing stops after a known
number of round trips whichever way it fails. Under `build_app` the ledger is the run's
one failure budget, shared with tool failures and stopped by the runtime
(`TOOL_FAILURES`); `RepairBudget` serves a plain ADK app (`REPAIR_BUDGET_EXHAUSTED`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ..errors import RunStopped

__all__ = [
    "REPAIR_BUDGET_EXHAUSTED",
    "RUNS_KEPT",
    "Charge",
    "RepairBudget",
    "RepairBudgetExhausted",
    "RepairLedger",
    "remember",
]

REPAIR_BUDGET_EXHAUSTED = "REPAIR_BUDGET_EXHAUSTED"

RUNS_KEPT = 4096
"""Per-run entries kept at most: a run ADK cancels ends with no callback, so the oldest
entries are dropped past this bound instead of growing without one."""


def remember(table: dict[str, Any], invocation_id: str, value: Any) -> None:
    """`table[invocation_id] = value`, dropping the oldest runs past `RUNS_KEPT`."""
    table[invocation_id] = value
    while len(table) > RUNS_KEPT:
        del table[next(iter(table))]


class RepairBudgetExhausted(RunStopped):
    """A stand-alone `RepairBudget` ended the run: the model needed more repairs than it
    allows."""

    CODE = REPAIR_BUDGET_EXHAUSTED
    PUBLIC_TEXT = "the model needed more repairs than this run allows"


@dataclass(frozen=True)
class Charge:
    attempt: int
    """How many failures the run has had, this one included."""
    limit: int
    within: bool
    """False once the run is past its budget: it ends at the next model call."""
    last: bool = False
    """The failure came at the run's last model call: no call is left to repair it, so
    the run ends whatever the budget."""


class RepairLedger(Protocol):
    def charge(self, ctx: ReadonlyContext, why: str, *, final_answer: bool = False) -> Charge:
        """Charges one failure; `final_answer` says it is the structured final answer's
        (its run may end with its own code, `StructuredAnswerInvalid`)."""
        ...

    def stop_response(self, ctx: ReadonlyContext) -> LlmResponse | None:
        """The response that ends a run past its budget, when this ledger ends runs
        itself (the runtime's ledger leaves that to the runtime)."""
        ...

    def halt(self, ctx: ReadonlyContext, stop: type[RunStopped], text: str) -> None:
        """Ends the run at its next model call with `stop` and `text` (a public text of
        that stop, for the user), whatever is left of the budget."""
        ...

    def end(self, invocation_id: str) -> None: ...


class RepairBudget:
    """Counts repairs per invocation; `limit` of them are answered, the next ends the run."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("the repair budget cannot be negative")
        self.limit = limit
        self._spent: dict[str, int] = {}
        self._halted: dict[str, tuple[type[RunStopped], str]] = {}

    def charge(self, ctx: ReadonlyContext, why: str, *, final_answer: bool = False) -> Charge:
        count = self._spent.get(ctx.invocation_id, 0) + 1
        remember(self._spent, ctx.invocation_id, count)
        return Charge(attempt=count, limit=self.limit, within=count <= self.limit)

    def spent(self, invocation_id: str) -> int:
        return self._spent.get(invocation_id, 0)

    def halt(self, ctx: ReadonlyContext, stop: type[RunStopped], text: str) -> None:
        remember(self._halted, ctx.invocation_id, (stop, text))

    def stop_response(self, ctx: ReadonlyContext) -> LlmResponse | None:
        stop: type[RunStopped]
        if ctx.invocation_id in self._halted:
            stop, text = self._halted[ctx.invocation_id]
        elif self._spent.get(ctx.invocation_id, 0) > self.limit:
            stop, text = RepairBudgetExhausted, RepairBudgetExhausted.PUBLIC_TEXT
        else:
            return None
        return LlmResponse(
            content=types.Content(
                role="model", parts=[types.Part(text=f"This run was stopped: {text}.")]
            ),
            error_code=stop.CODE,
            error_message=text,
            turn_complete=True,
        )

    def end(self, invocation_id: str) -> None:
        self._spent.pop(invocation_id, None)
        self._halted.pop(invocation_id, None)
