"""MCP servers as configuration records, attached to runs as ADK `McpToolset`s."""

from ._results import MCP_RESULT_PLUGIN_NAME, McpResultPlugin, drop_duplicate_text
from ._servers import (
    DelegatedServerError,
    DelegationSource,
    McpServerConfig,
    McpServerRegistry,
    UnknownMcpServerError,
)

__all__ = [
    "MCP_RESULT_PLUGIN_NAME",
    "DelegatedServerError",
    "DelegationSource",
    "McpResultPlugin",
    "McpServerConfig",
    "McpServerRegistry",
    "UnknownMcpServerError",
    "drop_duplicate_text",
]
