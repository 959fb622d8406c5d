"""What `yuxi serve api` says it serves before it starts: agents, database, worker, port,
memory search, MCP servers."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from fastapi import FastAPI

    from adk_yuxi.host import ApiConfig

__all__ = ["startup_banner"]


def startup_banner(app: FastAPI, config: ApiConfig, host: str, port: int) -> str:
    """Lines an operator checks at a glance: which agents, which database (password
    masked, a relative SQLite path resolved), this worker among those sharing it, and
    where it listens."""
    from adk_yuxi._sql.urls import parse_database_url

    host_state = app.state.host
    names = list(host_state.agents)  # the catalog's roots, each served with its tree
    database = parse_database_url(config.database_url).redacted()
    worker = host_state.control.worker
    where = f"http://{host}:{port}" if port else f"{host}, on a port the system picks"
    lines = [
        "yuxi serve api",
        f"  agents:   {', '.join(names)} ({len(names)})",
        f"  database: {database}",
        f"  worker:   {worker}; every `yuxi serve api` on this database is one more"
        f" worker (a dead one's runs close after {config.lease_seconds:g} s)",
        f"  address:  {where}",
        f"  memory:   {_memory_search(config)}",
    ]
    servers = config.toolbox.mcp_servers
    if servers is not None:
        for name in servers.enabled():
            lines.append(f"  mcp:      {name} at {_shown(servers.get(name).url)}")
    return "\n".join(lines)


def _memory_search(config: ApiConfig) -> str:
    embedder = config.memory_embedder
    return "full text" if embedder is None else f"full text and embeddings ({embedder.name})"


def _shown(url: str | None) -> str:
    """An MCP server's URL without credentials or query (which may carry a token)."""
    if url is None:
        return "stdio"
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port is not None:
        netloc += f":{parts.port}"
    return f"{parts.scheme}://{netloc}{parts.path}"
