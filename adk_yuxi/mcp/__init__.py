"""MCP servers as configuration records, attached to runs as ADK `McpToolset`s."""

from ._servers import McpServerConfig, McpServerRegistry, UnknownMcpServerError

__all__ = ["McpServerConfig", "McpServerRegistry", "UnknownMcpServerError"]
