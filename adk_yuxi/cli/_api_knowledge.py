"""`yuxi serve api --knowledge-url`: the served agents reach a running knowledge server.

The API signs each call's delegation with the private key of the JWK file that
`yuxi serve knowledge --key` verifies with (the same default path, so on one machine
both find the one file). The keys are not in the database: only the knowledge bases
and the rights are, which the server re-checks at each call. The server must be up
and the key file present before the API starts, so a wrong URL or key is one line at
start, not a `tool_failed` in every run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ._kb import DEFAULT_KEY

if TYPE_CHECKING:
    from adk_yuxi.mcp import McpServerRegistry
    from adk_yuxi.skills import SkillCatalog

__all__ = ["install_served_knowledge", "knowledge_options"]

F = TypeVar("F", bound=Callable[..., Any])
_ACCEPT = "application/json, text/event-stream"


def knowledge_options(command: F) -> F:
    """`--knowledge-url` and `--knowledge-key` on a serving command."""
    command = click.option(
        "--knowledge-key",
        type=click.Path(dir_okay=False, path_type=Path),
        default=DEFAULT_KEY,
        show_default=True,
        help="The delegation key (JWK, private) the knowledge server verifies with:"
        " the file `yuxi serve knowledge --key` created.",
    )(command)
    return click.option(
        "--knowledge-url",
        default=lambda: os.environ.get("YUXI_KNOWLEDGE_URL") or None,
        help="A running `yuxi serve knowledge` on this database (its /mcp URL): agents"
        " naming the knowledge-base skill query it (default: YUXI_KNOWLEDGE_URL; none:"
        " no knowledge server).",
    )(command)


def install_served_knowledge(url: str, key: Path) -> tuple[SkillCatalog, McpServerRegistry]:
    """The skill catalog and MCP servers with the knowledge server at `url` installed,
    signing with `key`; a `click.ClickException` line if either is not usable."""
    import httpx

    from adk_yuxi.knowledge import DelegationKeys, KnowledgeError, install_knowledge
    from adk_yuxi.mcp import McpServerRegistry
    from adk_yuxi.skills import SkillCatalog
    from adk_yuxi.tools import default_registry

    if not url.startswith(("http://", "https://")):
        raise click.ClickException(f"--knowledge-url must be an http(s) URL, not {url!r}")
    if not key.is_file():
        raise click.ClickException(
            f"no delegation key at {key}: start `yuxi serve knowledge` first (it creates"
            " the key) or give --knowledge-key"
        )
    try:
        keys = DelegationKeys.load_or_create(key)  # the file exists: read, never created
    except KnowledgeError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        # Not a JSON-RPC message: an MCP server answers 400 at once (a GET would open
        # its event stream and never end).
        answer = httpx.post(url, json={}, timeout=5.0, headers={"Accept": _ACCEPT})
    except httpx.HTTPError as exc:
        raise click.ClickException(
            f"the knowledge server at {url} is not reachable ({type(exc).__name__});"
            " start `yuxi serve knowledge` first"
        ) from None
    if answer.status_code == 404:
        raise click.ClickException(
            f"nothing is served at {url} (404): give the /mcp URL `yuxi serve knowledge` prints"
        )
    mcp_servers = McpServerRegistry()
    skills = SkillCatalog(default_registry, mcp_servers)
    install_knowledge(mcp_servers, skills, url=url, signer=keys.signer())
    return skills, mcp_servers
