"""A tiny real MCP server (mcp 2.x `MCPServer`) over stdio, started through McpToolset.

It writes the file named by YUXI_TEST_MARKER when it starts, so the test can tell
whether (and when) the runtime connected to it.
"""

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("lookup")


@server.tool()
def lookup_term(term: str) -> str:
    """Looks a term up in the glossary."""
    return f"{term}: a word in the glossary"


if __name__ == "__main__":
    Path(os.environ["YUXI_TEST_MARKER"]).write_text("started")
    server.run("stdio")
