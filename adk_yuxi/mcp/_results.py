"""One copy of an MCP tool's structured result for the model.

MCP asks a server that returns structured content to repeat it as serialized JSON in a
text block, for clients that read only text. ADK's `McpTool` hands the model its whole
result, so the model would read every structured result twice (our knowledge hits are
most of a turn's tokens). This plugin drops the text blocks that are exactly that JSON,
after the call and before anything stores or shows the result. Other blocks (images,
prose, an error's message) stay as they are.
"""

from __future__ import annotations

import json
from typing import Any

from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

__all__ = ["MCP_RESULT_PLUGIN_NAME", "McpResultPlugin", "drop_duplicate_text"]

MCP_RESULT_PLUGIN_NAME = "yuxi_mcp_results"


def _repeats(block: Any, structured: dict[str, Any]) -> bool:
    if not isinstance(block, dict) or block.get("type") != "text" or set(block) - {"type", "text"}:
        return False
    text = block.get("text")
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return False
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False


def drop_duplicate_text(result: dict[str, Any]) -> bool:
    """Removes, in place, the text blocks of a dumped MCP result that repeat its
    ``structuredContent`` (and a content list left empty, or sent empty); True if
    anything went. An error result is left whole."""
    structured = result.get("structuredContent")
    content = result.get("content")
    if result.get("isError") or not isinstance(structured, dict) or not isinstance(content, list):
        return False
    kept = [block for block in content if not _repeats(block, structured)]
    if content and len(kept) == len(content):
        return False
    if kept:
        result["content"] = kept
    else:
        del result["content"]
    return True


class McpResultPlugin(BasePlugin):
    """Trims MCP results in place and returns None, so later plugins still run (ADK
    stops at the first plugin that returns a value) and see the trimmed result."""

    def __init__(self, name: str = MCP_RESULT_PLUGIN_NAME) -> None:
        super().__init__(name=name)

    @override
    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        if isinstance(tool, McpTool) and isinstance(result, dict):
            drop_duplicate_text(result)
        return None
