"""MCP servers as configuration records, attached to runs as ADK `McpToolset`s."""

from ._results import MCP_RESULT_PLUGIN_NAME, McpResultPlugin, drop_duplicate_text
from ._servers import (
    DelegatedServerError,
    DelegationSource,
    DelegationUnavailable,
    McpServerConfig,
    McpServerRegistry,
    UnknownMcpServerError,
    Unnarrowed,
)

__all__ = [
    "MCP_RESULT_PLUGIN_NAME",
    "DelegatedServerError",
    "DelegationSource",
    "DelegationUnavailable",
    "McpResultPlugin",
    "McpServerConfig",
    "McpServerRegistry",
    "UnknownMcpServerError",
    "Unnarrowed",
    "drop_duplicate_text",
]
