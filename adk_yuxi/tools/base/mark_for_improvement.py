"""`mark_for_improvement`: a base tool that records a problem worth fixing, once.

The mark is saved in one transaction with three re-checks (the account, the right to
the agent, this worker's lease on the run), so a mark never outlives the right to make
it. A revoked right ends the run; a storage failure is a tool error and the run goes on.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from google.adk.tools.tool_context import ToolContext
from pydantic import StringConstraints

from ...access import AccessRepository, AgentExecutionRevoked
from ...errors import ToolErrorCode, tool_error
from ...ledger import RunLedger, WorkerLeaseExpired, ledger_plugin_of
from ...marks import Check, MarkConflict, MarkRefused
from .._metadata import ToolExtraMetadata

__all__ = ["MAX_REASON_CHARS", "METADATA", "mark_for_improvement"]

MAX_REASON_CHARS = 4000
NAME = "mark_for_improvement"
logger = logging.getLogger("adk_yuxi.tools.marks")
REFUSED = (
    "The mark was not recorded: the checks made when saving it refused it (this run may"
    " no longer record marks), so the run is ending."
)

Reason = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_REASON_CHARS)
]


METADATA = ToolExtraMetadata(
    category="base",
    tags=["feedback"],
    display_name="Mark for improvement",
    extra={"base_tool": True},
)
"""How the tool is catalogued where it is registered (`register_base_tools`)."""


async def mark_for_improvement(reason: Reason, tool_context: ToolContext) -> dict[str, Any]:
    """Records, for the people who improve this agent, a problem or a method worth keeping.

    Call it yourself, without being asked, when the user corrects you, when the user is
    unhappy more than once, when a tool fails, or when you lack a capability you need;
    and when you find a reusable way of solving a task that is worth keeping. Record
    one mark per distinct problem, with a `reason` (up to 4000 characters) that says
    what happened and what would have helped. Then carry on with the user's task.
    """
    plugin = ledger_plugin_of(tool_context)
    if plugin is None:
        return tool_error(ToolErrorCode.TOOL_NOT_AVAILABLE, NAME)
    call_id = tool_context.function_call_id
    invocation_id = tool_context.invocation_id
    active = plugin.run_of(invocation_id) if invocation_id else None
    if not call_id or active is None:
        return tool_error(ToolErrorCode.TOOL_FAILED, NAME)
    session = tool_context.session
    agent = tool_context.agent_name
    checks: list[Check] = []
    if plugin.repository is not None:
        checks.append(
            (
                AgentExecutionRevoked,
                lambda tx: AccessRepository.execution_denial_in(tx, session.user_id, agent),
            )
        )
    checks.append(
        (
            WorkerLeaseExpired,
            lambda tx: RunLedger.hold(tx, active.run_id, active.worker),
        )
    )
    try:
        mark, _ = await plugin.marks.record(
            run_id=active.run_id,
            call_id=call_id,
            app_name=session.app_name,
            user_id=session.user_id,
            agent_name=agent,
            session_id=session.id,
            invocation_id=invocation_id,
            reason=reason,
            checks=checks,
        )
    except MarkRefused as refused:
        logger.warning("mark refused, run %s ends: %s", active.run_id, refused)
        active.stop(refused.stop)
        return tool_error(ToolErrorCode.RUN_ENDING, NAME, message=REFUSED)
    except MarkConflict:
        return tool_error(ToolErrorCode.CONFLICT, NAME)
    except Exception:  # storage down or failing: the run goes on without the mark
        logger.exception("saving a mark of run %s failed", active.run_id)
        return tool_error(ToolErrorCode.TOOL_FAILED, NAME)
    return {"id": mark.id, "run_id": mark.run_id, "saved": True}
