"""MCP servers as configuration records, attached to runs as ADK `McpToolset`s."""

from ._servers import (
    DelegatedServerError,
    DelegationSource,
    McpServerConfig,
    McpServerRegistry,
    UnknownMcpServerError,
)

__all__ = [
    "DelegatedServerError",
    "DelegationSource",
    "McpServerConfig",
    "McpServerRegistry",
    "UnknownMcpServerError",
]
