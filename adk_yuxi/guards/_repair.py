"""Repair of malformed calls: each goes back to the model as a structured tool error with
what was wrong and the expected arguments in brief, within a per-invocation budget.

Built on ADK's `ReflectAndRetryToolPlugin`: its after-tool hook finds errors inside tool
results (`extract_error_from_result`) and its response marker keeps a repaired result
from being handled twice. What it counts differs: one budget per invocation, shared with
the other guards, instead of consecutive failures per tool. Exceptions raised by tools
are not malformed calls and are left to the runtime's tool-failure handling.

Handled here, after the authorization plugin has had its say (so a refusal is never
turned into a hint about hidden tools):
- arguments that were not a JSON object (`MALFORMED_ARGUMENTS_KEY`, set by the guarded
  OpenAI client, or by the structured-output guard for a final answer that is not
  JSON): answered before the tool runs;
- a call to a name this step did not declare: the refusal gains the declared names;
- arguments that failed strict validation, and an invalid `set_model_response`.
Past the budget the run ends at the next model call, with the ledger's error event.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.set_model_response_tool import SetModelResponseTool
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from .._adk import HookedReflectAndRetryPlugin
from ..errors import ToolErrorCode, tool_error
from ..models import MALFORMED_ARGUMENTS_KEY, declared_tool_names
from ..observability._metrics import instruments
from ._budget import RepairLedger, remember
from ._run_scoped import RunScoped
from ._schema_brief import parameters_schema, schema_brief

__all__ = ["REPAIR_PLUGIN_NAME", "RESPONSE_TYPE", "CallRepairPlugin"]

REPAIR_PLUGIN_NAME = "yuxi_call_repair"
RESPONSE_TYPE = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"

_CODES = {
    "malformed_arguments": ToolErrorCode.MALFORMED_ARGUMENTS,
    "tool_not_available": ToolErrorCode.TOOL_NOT_AVAILABLE,
    "invalid_arguments": ToolErrorCode.INVALID_ARGUMENTS,
    "invalid_final_answer": ToolErrorCode.INVALID_FINAL_ANSWER,
}


def _error_code(tool: BaseTool, result: Any) -> str | None:
    if not isinstance(result, dict):
        return None
    error = result.get("error")
    if isinstance(tool, SetModelResponseTool) and isinstance(error, str):
        return "invalid_final_answer"
    if not isinstance(error, dict):
        return None
    code = error.get("code")
    if code == "invalid_arguments":
        return code
    if code == "tool_not_available" and type(tool) is BaseTool:
        return code
    return None


class CallRepairPlugin(RunScoped, HookedReflectAndRetryPlugin):
    """`ledger` is charged once per repair; `build_app` passes the run's failure budget."""

    def __init__(self, ledger: RepairLedger, *, name: str = REPAIR_PLUGIN_NAME) -> None:
        super().__init__(name=name, throw_exception_if_retry_exceeded=False)
        self.ledger = ledger
        self._declared: dict[str, LlmRequest] = {}

    # -- the answers -----------------------------------------------------------------

    def _answer(
        self, code: str, tool: BaseTool, ctx: ToolContext, fields: dict[str, Any]
    ) -> dict[str, Any]:
        final_answer = tool.name == SetModelResponseTool.NAME
        charge = self.ledger.charge(ctx, f"{code} on {tool.name!r}", final_answer=final_answer)
        instruments().repair(code, tool.name, charge.within)
        if code == "tool_not_available":
            request = self._declared.get(ctx.invocation_id)
            fields["available"] = [] if request is None else declared_tool_names(request)
        else:
            fields["expected"] = schema_brief(parameters_schema(tool))
        answer = tool_error(_CODES[code], tool.name, **fields)
        if charge.last:
            answer["error"]["message"] += " That was the last model call of this run; it ends."
        elif not charge.within:
            answer["error"]["message"] += " The repair budget of this run is used up; it ends."
        answer["response_type"] = RESPONSE_TYPE
        answer["repair"] = {"attempt": charge.attempt, "budget": charge.limit}
        return answer

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        marker = tool_args.get(MALFORMED_ARGUMENTS_KEY)
        if marker is None:
            return None
        problem = marker.get("error") if isinstance(marker, dict) else None
        return self._answer(
            "malformed_arguments", tool, tool_context, {"problem": str(problem or "not JSON")}
        )

    @override
    async def extract_error_from_result(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: Any
    ) -> dict[str, Any] | None:
        return result if _error_code(tool, result) else None

    @override
    async def handle_failure(
        self, tool: BaseTool, tool_args: dict[str, Any], tool_context: Any, error: Any
    ) -> dict[str, Any] | None:
        code = _error_code(tool, error)
        if code is None:
            return None
        found = error["error"]
        if isinstance(found, dict):
            kept = {k: v for k, v in found.items() if k in ("problems", "argument")}
        else:
            kept = {"problem": found}
        return self._answer(code, tool, tool_context, kept)

    @override
    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        return None  # a tool that raised is a tool failure, not a malformed call

    # -- the run ---------------------------------------------------------------------

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        stop = self.ledger.stop_response(callback_context)
        if stop is not None:
            return stop
        # The request itself: its names are read only if a call needs the list.
        remember(self._declared, callback_context.invocation_id, llm_request)
        return None

    def end_run(self, invocation_id: str) -> None:
        self.ledger.end(invocation_id)
        self._declared.pop(invocation_id, None)
