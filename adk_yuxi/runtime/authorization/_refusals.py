"""The one place the runtime turns a decision into what the model, the host and the
operator see: a tool error for the model (`adk_yuxi.errors.tool_error`), an error
event that ends the run (`adk_yuxi.errors.stop_response`), and a `capability_limited`
log record with the details (`Refusal`, also handed to the app's `on_refusal` hook)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from adk_yuxi.errors import ToolErrorCode, tool_error

from ...observability._metrics import instruments
from ._decision_spans import note_refusal

__all__ = ["CAPABILITY_LIMITED", "Refusal", "RefusalHook", "Reporter"]

CAPABILITY_LIMITED = "capability_limited"

logger = logging.getLogger("adk_yuxi.runtime.authorization")


@dataclass(frozen=True)
class Refusal:
    """One refused call or stopped run, for operators: what the model never sees."""

    code: str
    """A `ToolErrorCode` value for a refused call, a `RunStopped.CODE` for a stop."""
    tool: str | None
    user_id: str
    agent: str
    invocation_id: str
    detail: str
    event: str = CAPABILITY_LIMITED

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


RefusalHook = Callable[[Refusal], None]


class Reporter:
    """Logs refusals and calls the hook; builds what the model gets back."""

    def __init__(self, agent: str, hook: RefusalHook | None) -> None:
        self.agent = agent
        self._hook = hook

    def record(
        self,
        code: str,
        *,
        user_id: str,
        invocation_id: str,
        tool: str | None,
        detail: str,
        agent: str | None = None,
    ) -> None:
        """`agent` is the agent of a tree that made the call (default: the root)."""
        agent = agent or self.agent
        note_refusal(code)
        refusal = Refusal(
            code=code,
            tool=tool,
            user_id=user_id,
            agent=agent,
            invocation_id=invocation_id,
            detail=detail,
        )
        logger.warning(
            "%s: %s (tool=%s user=%s agent=%s): %s",
            refusal.event,
            code,
            tool,
            user_id,
            agent,
            detail,
            extra={"yuxi_event": refusal.event, "yuxi_refusal": refusal.as_dict()},
        )
        if code != ToolErrorCode.TOOL_FAILED:  # a failure, counted as one (`tool_failure`)
            instruments().refusal(code, tool, agent)
        if self._hook is not None:
            self._hook(refusal)

    @staticmethod
    def tool_error(code: ToolErrorCode, tool: str, **fields: Any) -> dict[str, Any]:
        return tool_error(code, tool, **fields)
