"""The same tool call answered the same way, over and over, ends the run.

A weak model that does not take in a result calls the tool again with the same arguments
and gets the same answer, until the run's call limit (`max_llm_calls`, 50 by default) is
spent. Failing calls are stopped by `ReturnedFailurePlugin`; this guard stops successful
ones: the `repeat_limit`-th call of one tool with the same arguments that returned the
same result in one run ends the run at its next model call (`REPEATED_TOOL_CALL`, whose
text the user sees). A result that changed (a note saved in between, a job that moved on)
is a new call, so polling that makes progress is never stopped.

OpenAI's Agents SDK and LangGraph only cap the number of turns or steps; Gemini CLI
stops a turn after five identical consecutive tool calls. The limit here is five too by
default (`Limits.stop_after_same_call`), counted over the run, not only consecutive
calls: a model alternating two calls loops as surely as one repeating one.
"""

from __future__ import annotations

from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from ..errors import RunStopped
from ._budget import RepairLedger
from ._call_counts import CallCountPlugin, shown_tool

__all__ = ["REPEATED_TOOL_CALL", "REPEAT_PLUGIN_NAME", "RepeatedCallPlugin", "RepeatedToolCall"]

REPEAT_PLUGIN_NAME = "yuxi_repeated_calls"
REPEATED_TOOL_CALL = "REPEATED_TOOL_CALL"


class RepeatedToolCall(RunStopped):
    """The model made the same tool call and got the same result over and over: the run
    ends instead of looping until its call limit."""

    CODE = REPEATED_TOOL_CALL
    PUBLIC_TEXT = "the model kept repeating the same tool call"

    @classmethod
    def public_text(cls, tool: str, times: int) -> str:
        return (
            f"the model called {shown_tool(tool)} {times} times with the same arguments and"
            " got the same result each time"
        )


def _failed(result: Any) -> bool:
    """Failures are counted by `ReturnedFailurePlugin` (or where they were raised)."""
    return isinstance(result, dict) and ("error" in result or result.get("isError") is True)


class RepeatedCallPlugin(CallCountPlugin):
    """Ends the run (through `ledger`) at the `repeat_limit`-th identical call of a tool
    with an identical result."""

    def __init__(
        self, ledger: RepairLedger, *, repeat_limit: int = 5, name: str = REPEAT_PLUGIN_NAME
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
        if _failed(result):
            return None
        times = self.count(tool_context.invocation_id, tool, tool_args, result)
        if times < self.repeat_limit:
            return None
        self.ledger.halt(
            tool_context, RepeatedToolCall, RepeatedToolCall.public_text(tool.name, times)
        )
        ending = f"The same call returned the same result {times} times, so this run ends."
        return {**result, "run_ending": ending} if isinstance(result, dict) else None
