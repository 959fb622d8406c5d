"""Errors a tool *returns* are failures too, and the same failing call repeated ends the run.

A weak model answered `invalid_expression` by calling `calculate(":{")` again, 118 times in
one turn; another called a tool that answered `tool_not_available` 30 times in a row.
Neither raised, so neither was charged to the run's failure budget. This guard charges
every structured error a tool returns (`{"error": {"code": ...}}`, or `{"error": "..."}`)
to the same ledger as raised failures and repairs, and counts each failing call by its
tool and arguments: the `repeat_limit`-th identical failure ends the run at its next model
call with `REPEATED_TOOL_FAILURE`, whose text the user sees.

Results the other guards or the runtime already charged (a repaired call, a raised
failure, the run ending) are not charged again.
"""

from __future__ import annotations

from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from ..errors import RunStopped, ToolErrorCode
from ._budget import RepairLedger
from ._call_counts import CallCountPlugin, shown_tool

__all__ = [
    "FAILURE_PLUGIN_NAME",
    "REPEATED_TOOL_FAILURE",
    "RepeatedToolFailure",
    "ReturnedFailurePlugin",
    "returned_error_code",
]

FAILURE_PLUGIN_NAME = "yuxi_returned_failures"
REPEATED_TOOL_FAILURE = "REPEATED_TOOL_FAILURE"
_REPAIRED = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"  # the repair guard's answers
# Charged where they arise (a raised failure), or the consequence of a stop.
_CHARGED_ELSEWHERE = {
    ToolErrorCode.TOOL_FAILED.value,
    ToolErrorCode.RUN_ENDING.value,
    ToolErrorCode.LIMIT_REACHED.value,
    ToolErrorCode.AGENT_STOPPED.value,
}


class RepeatedToolFailure(RunStopped):
    """The model made the same failing tool call (same tool, same arguments) over and
    over: the run ends instead of looping until its call limit."""

    CODE = REPEATED_TOOL_FAILURE
    PUBLIC_TEXT = "the model kept repeating a tool call that failed"

    @classmethod
    def public_text(cls, tool: str, times: int) -> str:
        return (
            f"the model called {shown_tool(tool)} {times} times with the same arguments and"
            " it failed each time"
        )


def returned_error_code(result: Any) -> str | None:
    """The code of an error a tool returned (None: not an error, or one charged elsewhere)."""
    if not isinstance(result, dict) or result.get("response_type") == _REPAIRED:
        return None
    error = result.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        code = code if isinstance(code, str) and code else "error"
    elif isinstance(error, str) and error.strip():
        code = "error"
    elif result.get("isError") is True:  # an MCP tool's error result
        code = "mcp_error"
    else:
        return None
    return None if code in _CHARGED_ELSEWHERE else code


class ReturnedFailurePlugin(CallCountPlugin):
    """Charges returned tool errors to `ledger`; ends the run at the `repeat_limit`-th
    identical failing call."""

    def __init__(
        self, ledger: RepairLedger, *, repeat_limit: int = 3, name: str = FAILURE_PLUGIN_NAME
    ) -> None:
        super().__init__(ledger, repeat_limit=repeat_limit, name=name)

    @override
    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        code = returned_error_code(result)
        if code is None:
            return None
        times = self.count(tool_context.invocation_id, tool, tool_args)
        charge = self.ledger.charge(tool_context, f"{code} on {tool.name!r}")
        if times >= self.repeat_limit:
            text = RepeatedToolFailure.public_text(tool.name, times)
            self.ledger.halt(tool_context, RepeatedToolFailure, text)
            ending = f" The same call failed {times} times, so this run ends."
        elif not charge.within:
            ending = " Too many tool calls failed in this run, so it ends."
        else:
            return None
        answer = dict(result)
        error = answer.get("error")
        if isinstance(error, dict):
            answer["error"] = {**error, "message": f"{error.get('message', '')}{ending}".strip()}
        else:
            answer["run_ending"] = ending.strip()
        return answer
