"""The structured errors the base tools return to the model: a code and advice."""

from __future__ import annotations

from typing import Any

__all__ = ["base_tool_error"]

_MESSAGES = {
    "not_configured": (
        "This tool is not set up for this agent (no run ledger), so it did not run."
        " Carry on without it."
    ),
    "no_call_identity": (
        "This call has no invocation or call id from the runtime, so nothing was saved."
    ),
    "waitpoint_invalid": (
        "The stored questions can no longer be read, so they cannot be answered. Ask again"
        " if you still need the answers."
    ),
    "waitpoint_conflict": (
        "These questions were already settled differently, so this answer was not used."
    ),
    "agent_execution_revoked": "Access to this agent was withdrawn; the run is ending.",
    "worker_lease_expired": "This run was taken over by another worker; it is ending.",
    "mark_conflict": ("This call already saved a mark with another reason; nothing changed."),
    "storage_unavailable": (
        "The record could not be saved because storage is unavailable right now. Carry on"
        " with the user's task."
    ),
    "invalid_path": (
        "A path is not a file the user can present, so nothing was presented. Use absolute"
        " paths of regular files under the workspace root."
    ),
    "artifact_save_failed": "Saving the files failed, so the presentation is incomplete.",
}


def base_tool_error(code: str, tool: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"code": code, "tool": tool, "message": _MESSAGES[code], **fields}}
