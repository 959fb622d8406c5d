"""`ToolResultOffloadPlugin`: a large tool result goes to the session's artifacts, and
the model gets a preview of it instead.

A result stays in every later model request of the session, so one web page or table
dump pays again at each turn (and can overflow the model's context). After a tool
runs, a result whose JSON is larger than the agent's `ToolResultOffload` threshold is
saved through the tool context's artifact service: session-scoped, under
`tool-results/…`, recorded in the event's ``artifact_delta`` (so `adk web` lists it in
its Artifacts tab). The model gets its head, its size and the artifact's name, and
reads on with `read_tool_result`.

Never offloaded (decided by what the tool is, never by its name: `_offload_exempt`):
results that carry media (a `Part` with bytes or a URI: ADK gives it to the model as
parts, not text), results of the platform's tools that page their own output (the
knowledge server's, as a built-in MCP server; its `web_fetch`, `web_search` and
`ocr_parse_file`), answers the model must see whole (ADK's final structured answer,
handoffs and loaded skills; the user's answers to questions; `read_tool_result` itself);
and the config's `exempt_tools`, the deployer's own choice by name.

Before any of that, every result is bounded (`jsonbounds`): one nested too deep, that
contains itself, or holds an integer too long, NaN or a lone surrogate reaches the model
and the session as a bounded copy with its cut parts marked, and a note saying so; so
no tool result can make the session unreadable.

The plugin goes last: it answers with a new result (the tool's own is never changed in
place; it may be shared), and ADK stops at the first plugin that answers.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from typing import TYPE_CHECKING, Any

from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.computer_use.computer_use_tool import ComputerUseTool
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from ..._sql.jsonbounds import CUT_MARK, Bounded, bound_json
from ...observability._labels import know_tools
from ...tools.base.read_tool_result import NAME as READ_TOOL
from ...tools.base.read_tool_result import STORED_RESULT_PREFIX
from ..config._offload_config import ToolResultOffload
from ._offload_exempt import carries_media, pages_own_output, wants_whole_result

if TYPE_CHECKING:
    from ..authorization._plugin import AuthorizationPlugin
    from ..rights._runtime import Runtime

__all__ = ["OFFLOAD_PLUGIN_NAME", "ToolResultOffloadPlugin", "bounded_answer"]

OFFLOAD_PLUGIN_NAME = "yuxi_tool_result_offload"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
logger = logging.getLogger("adk_yuxi.runtime.offload")


def bounded_answer(bounded: Bounded) -> dict[str, Any]:
    """What the model and the session get for a result past the storage bounds: the
    bounded copy, and why it is not the tool's result as it was."""
    reasons = ", ".join(sorted(bounded.reasons))
    return {
        "bounded_result": bounded.value,
        "note": (
            f"The tool's result could not be stored as it was ({reasons}); this is a"
            f" bounded copy, its cut parts replaced by strings starting {CUT_MARK!r}."
        ),
    }


def result_text(result: Any) -> tuple[str, str]:
    """The text a result is stored as, and its MIME type: a tool's plain string as it
    is (ADK hands the model ``{"result": text}``), anything else as JSON. Lone
    surrogates become U+FFFD, so offsets count the characters that are stored.
    Raises `ValueError` for a result JSON cannot hold (a cycle)."""
    if isinstance(result, dict) and set(result) == {"result"} and isinstance(result["result"], str):
        text, mime_type = result["result"], "text/plain"
    elif isinstance(result, str):
        text, mime_type = result, "text/plain"
    else:
        text = json.dumps(result, ensure_ascii=False, default=str)
        mime_type = "application/json"
    return text.encode("utf-8", "replace").decode("utf-8"), mime_type


def artifact_name(tool: str, mime_type: str) -> str:
    """A new session-scoped name for one stored result: the tool's name made safe, and
    a random suffix (a call id comes from the model and may be anything)."""
    stem = _UNSAFE.sub("_", tool).strip("_")[:48] or "tool"
    extension = "json" if mime_type == "application/json" else "txt"
    return f"{STORED_RESULT_PREFIX}{stem}-{uuid.uuid4().hex[:12]}.{extension}"


def preview(
    text: str,
    policy: ToolResultOffload,
    *,
    name: str | None,
    version: int | None,
    size: int,
    readable: bool = True,
) -> dict[str, Any]:
    """What the model gets instead of the result (`readable`: the run has the read tool)."""
    head = text[: policy.preview_chars]
    shown = {
        "total_chars": len(text),
        "total_bytes": size,
        "preview": head,
        "next_offset": len(head) if len(head) < len(text) else None,
    }
    if name is None:
        note = (
            f"This result ({len(text)} characters) was too large to show whole and could not"
            " be stored, so only its beginning is shown."
        )
        return {"stored_result": None, **shown, "note": note}
    note = f"This result ({len(text)} characters) was too large to show whole and was saved."
    if readable:
        note += (
            f" Its beginning is in `preview`; read on with"
            f" {READ_TOOL}(artifact={name!r}, offset=next_offset)."
        )
    return {"stored_result": {"artifact": name, "version": version}, **shown, "note": note}


class ToolResultOffloadPlugin(BasePlugin):
    """Offloads large results of the runs the authorization plugin bound, on the policy
    of the agent that made the call (its own `AgentConfig.offload_tool_results`)."""

    def __init__(self, plugin: AuthorizationPlugin, name: str = OFFLOAD_PLUGIN_NAME) -> None:
        super().__init__(name=name)
        self.plugin = plugin

    def _runtime(self, tool_context: ToolContext) -> Runtime | None:
        run = self.plugin.run_of(tool_context)
        tree = None if run is None else run.runtime
        return None if tree is None else tree.agent(tree.checked_as(tool_context.agent_name))

    @staticmethod
    def pages_itself(tool: BaseTool, runtime: Runtime) -> bool:
        """Knowledge and web tools page their own results: not stored twice."""
        if isinstance(tool, McpTool):
            return runtime.builtin_server_of(tool) is not None
        return pages_own_output(tool)

    @override
    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        if type(tool) is not BaseTool:  # a real tool (a name the model made up is not)
            know_tools((tool.name,))
        bounded = bound_json(result, text=True)
        answer = bounded_answer(bounded) if bounded.changed else None
        if answer is not None:
            logger.warning("a result of %r was bounded: %s", tool.name, sorted(bounded.reasons))
            result = answer
        offloaded = await self._offload(tool, tool_context, result)
        return answer if offloaded is None else offloaded

    async def _offload(
        self, tool: BaseTool, tool_context: ToolContext, result: dict[str, Any]
    ) -> dict[str, Any] | None:
        if wants_whole_result(tool):
            return None
        runtime = self._runtime(tool_context)
        policy = None if runtime is None else runtime.context.config.offload_tool_results
        if runtime is None or policy is None or tool.name in policy.exempt_tools:
            return None
        if isinstance(tool, ComputerUseTool) or carries_media(result):
            return None  # its media reaches the model as parts
        try:
            text, mime_type = result_text(result)
        except (ValueError, TypeError):
            return None  # not JSON: left to ADK, as without this plugin
        data = text.encode("utf-8")
        if len(data) <= policy.max_inline_bytes or self.pages_itself(tool, runtime):
            return None
        name = artifact_name(tool.name, mime_type)
        metadata = {
            "stored_tool_result": True,
            "tool": tool.name,
            "function_call_id": tool_context.function_call_id,
            "total_chars": len(text),
        }
        try:
            version = await tool_context.save_artifact(
                name, types.Part.from_bytes(data=data, mime_type=mime_type), metadata
            )
        except Exception:  # no artifact service, storage down, too large: bounded anyway
            logger.exception("a result of %r (%d bytes) could not be stored", tool.name, len(data))
            return preview(text, policy, name=None, version=None, size=len(data))
        readable = READ_TOOL in runtime.tools.local
        return preview(text, policy, name=name, version=version, size=len(data), readable=readable)
