"""The knowledge server as the runtime sees it: a built-in MCP server named
``knowledge``, enabled by default, reached with a delegation minted for the run's user.

`install_knowledge` registers the server record, attaches the delegation and loads the
built-in ``knowledge-base`` skill. Tool names and schemas are not copied here: ADK's
`McpToolset` lists them from the server's live catalog.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from threading import Lock

from google.adk.agents.readonly_context import ReadonlyContext

from ..mcp import DelegationUnavailable, McpServerConfig, McpServerRegistry, Unnarrowed
from ..skills import SkillCatalog
from ._delegation import DelegationScopeError, DelegationSigner
from ._results import RESULT_FORM_HEADER

__all__ = [
    "KNOWLEDGE_SERVER_NAME",
    "KNOWLEDGE_SKILL_DIR",
    "KNOWLEDGE_SKILL_NAME",
    "SESSION_SELECTION_KEY",
    "KnowledgeDelegation",
    "install_knowledge",
]

KNOWLEDGE_SERVER_NAME = "knowledge"
KNOWLEDGE_SKILL_NAME = "knowledge-base"
KNOWLEDGE_SKILL_DIR = Path(__file__).with_name("skills")
SESSION_SELECTION_KEY = "knowledge_bases"
"""Session state key holding the knowledge bases selected for the session (a list of
ids); absent means every base the agent may use. It narrows, never widens."""

_CACHE_SIZE = 1024


def session_selection(ctx: ReadonlyContext, allowed: Sequence[str]) -> tuple[str, ...]:
    chosen = ctx.state.get(SESSION_SELECTION_KEY)
    if chosen is None:
        return tuple(allowed)
    if not isinstance(chosen, list | tuple):
        return ()  # a malformed selection selects nothing rather than everything
    picked = {k for k in chosen if isinstance(k, str)}
    return tuple(k for k in allowed if k in picked)


class KnowledgeDelegation:
    """Mints the bearer token for each request of a run to the knowledge server.

    A token is reused for the same (user, session, selection) while it has more than
    ``refresh_margin`` seconds left, so the request headers stay stable and ADK keeps
    one MCP session for them instead of opening one per call; a change of selection or
    an expiring token gives a fresh one. Rights are not in the token's lifetime: the
    server re-reads them at every call. The requests ask for structured results alone:
    ADK hands the model ``structuredContent``, so a JSON text copy of it would only be
    serialized, parsed and dropped again (`McpResultPlugin`).
    """

    def __init__(self, signer: DelegationSigner, *, refresh_margin: int = 30) -> None:
        if refresh_margin >= signer.ttl_seconds:
            raise ValueError("refresh_margin must be shorter than the token lifetime")
        self._signer = signer
        self._margin = refresh_margin
        self._lock = Lock()
        self._tokens: OrderedDict[tuple[str, str, tuple[str, ...]], tuple[str, float]] = (
            OrderedDict()
        )

    def headers_for(
        self, ctx: ReadonlyContext, user_id: str, knowledge_bases: Sequence[str]
    ) -> dict[str, str]:
        """Neither the agent nor the session narrowing the bases, the token carries
        "what this user may read now" (any number of bases); a selection a token cannot
        carry is `DelegationUnavailable`, never a silently missing server."""
        everything = isinstance(knowledge_bases, Unnarrowed) and (
            ctx.state.get(SESSION_SELECTION_KEY) is None
        )
        kbs = () if everything else session_selection(ctx, knowledge_bases)
        key = (user_id, ctx.session.id, ("*",) if everything else kbs)
        now = time.time()
        with self._lock:
            cached = self._tokens.get(key)
            if cached is not None and cached[1] - now > self._margin:
                self._tokens.move_to_end(key)
                return _headers(cached[0])
        try:
            token = self._signer.mint(user_id, ctx.session.id, None if everything else kbs, now=now)
        except DelegationScopeError as exc:
            raise DelegationUnavailable(f"knowledge server: {exc}") from None
        with self._lock:
            self._tokens[key] = (token, now + self._signer.ttl_seconds)
            while len(self._tokens) > _CACHE_SIZE:
                self._tokens.popitem(last=False)
        return _headers(token)


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", RESULT_FORM_HEADER: "structured"}


def install_knowledge(
    mcp_servers: McpServerRegistry,
    skills: SkillCatalog | None,
    *,
    url: str,
    signer: DelegationSigner,
    enabled: bool = True,
    timeout: float = 30.0,
) -> McpServerConfig:
    """Registers the built-in ``knowledge`` server (streamable HTTP at ``url``) with its
    delegation, and the ``knowledge-base`` skill in ``skills``."""
    config = McpServerConfig(
        name=KNOWLEDGE_SERVER_NAME,
        enabled=enabled,
        transport="streamable_http",
        url=url,
        timeout=timeout,
    )
    mcp_servers.register(config)
    mcp_servers.attach_delegation(KNOWLEDGE_SERVER_NAME, KnowledgeDelegation(signer))
    if skills is not None:
        skills.load_dir(KNOWLEDGE_SKILL_DIR)
    return config
