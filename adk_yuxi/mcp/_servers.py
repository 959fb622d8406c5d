"""MCP servers as configuration records, turned into ADK `McpToolset`s on demand.

There is no server registry service yet, so a server is a validated record (name,
enabled flag, transport and its connection parameters); who may use it is a share
config in `adk_yuxi.access` under the same name. Building a toolset does not connect:
ADK's `McpToolset` opens its session on the first `get_tools` or call, which is what
lets the runtime keep a skill's MCP server disconnected until the skill is active.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.mcp_tool.mcp_session_manager import (
    SseConnectionParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from mcp import StdioServerParameters
from pydantic import BaseModel, ConfigDict, Field, model_validator

from adk_yuxi.errors import YuxiError

from ..observability._outgoing import traced_mcp_http_client

__all__ = [
    "DelegatedServerError",
    "DelegationSource",
    "McpServerConfig",
    "McpServerRegistry",
    "UnknownMcpServerError",
]

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


class UnknownMcpServerError(YuxiError, KeyError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"no MCP server is configured under the name {self.name!r}"


class DelegatedServerError(YuxiError, ValueError):
    """A delegated (built-in) server was given a credential of its own."""


class DelegationUnavailable(YuxiError, RuntimeError):
    """A built-in server's delegation could not be minted for this run (e.g. a selection
    too wide for a token): the run reports it instead of running without the server."""


class Unnarrowed(tuple[str, ...]):
    """The knowledge bases of a run whose agent did not narrow them: everything its
    user may read at assembly. A delegation may carry "what this user may read now"
    instead of the list (the server checks current rights at every call anyway)."""

    __slots__ = ()


class DelegationSource(Protocol):
    """Mints the headers that let a built-in server act for the run's user.

    Asked before every MCP request of a run (ADK's header provider), with the run's
    user and the knowledge bases its agent may use; the session's own selection is in
    ``ctx``. A server with a delegation source is built in: it takes no configured
    credential, and every user may reach it (its rights are per resource, per call).
    """

    def headers_for(
        self, ctx: ReadonlyContext, user_id: str, knowledge_bases: Sequence[str]
    ) -> dict[str, str]: ...


class McpServerConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    enabled: bool = True
    transport: Literal["stdio", "streamable_http", "sse"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    timeout: float = Field(default=10.0, gt=0, le=600)
    tool_prefix: str | None = None

    @model_validator(mode="after")
    def _check(self) -> McpServerConfig:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"MCP server name {self.name!r} must match {_NAME.pattern}")
        if self.transport == "stdio" and not self.command:
            raise ValueError(f"MCP server {self.name!r}: the stdio transport needs a command")
        if self.transport != "stdio" and not self.url:
            raise ValueError(
                f"MCP server {self.name!r}: the {self.transport} transport needs a url"
            )
        return self

    def _connection(self) -> Any:
        if self.transport == "stdio":
            assert self.command is not None
            return StdioConnectionParams(
                server_params=StdioServerParameters(
                    command=self.command, args=list(self.args), env=self.env
                ),
                timeout=self.timeout,
            )
        assert self.url is not None
        # Every request carries the trace context of the call that sends it.
        traced: Any = traced_mcp_http_client
        if self.transport == "sse":
            return SseConnectionParams(
                url=self.url, headers=self.headers, timeout=self.timeout,
                httpx_client_factory=traced,
            )  # fmt: skip
        return StreamableHTTPConnectionParams(
            url=self.url, headers=self.headers, timeout=self.timeout, httpx_client_factory=traced
        )

    def toolset(self, header_provider: Any = None) -> McpToolset:
        """A new, not yet connected toolset for this server."""
        return McpToolset(
            connection_params=self._connection(),
            tool_name_prefix=self.tool_prefix,
            header_provider=header_provider,
        )


class McpServerRegistry:
    """Known MCP servers by name. A disabled server stays known (skills that name it fail
    validation with a precise reason) but is never attached to a run."""

    def __init__(self, servers: list[McpServerConfig] | None = None) -> None:
        self._lock = threading.Lock()
        self._servers: dict[str, McpServerConfig] = {}
        self._delegation: dict[str, DelegationSource] = {}
        for server in servers or []:
            self.register(server)

    def register(self, server: McpServerConfig) -> McpServerConfig:
        with self._lock:
            if server.name in self._servers:
                raise ValueError(f"MCP server {server.name!r} is already configured")
            self._servers[server.name] = server
        return server

    def replace(self, server: McpServerConfig) -> None:
        with self._lock:
            if server.name not in self._servers:
                raise UnknownMcpServerError(server.name)
            if server.name in self._delegation:
                _refuse_credentials(server)
            self._servers[server.name] = server

    def attach_delegation(self, name: str, source: DelegationSource) -> None:
        """Makes ``name`` a built-in server reached with per-user delegation."""
        with self._lock:
            if name not in self._servers:
                raise UnknownMcpServerError(name)
            _refuse_credentials(self._servers[name])
            self._delegation[name] = source

    def is_builtin(self, name: str) -> bool:
        return name in self._delegation

    def toolset(
        self, name: str, *, user_id: str, knowledge_bases: Sequence[str] = ()
    ) -> McpToolset:
        """A not yet connected toolset for one run's user; a built-in server's requests
        carry a delegation minted for that user at each request."""
        server = self.get(name)
        source = self._delegation.get(name)
        if source is None:
            return server.toolset()
        kbs = knowledge_bases if isinstance(knowledge_bases, Unnarrowed) else tuple(knowledge_bases)

        def headers(ctx: ReadonlyContext) -> dict[str, str]:
            return source.headers_for(ctx, user_id, kbs)

        return server.toolset(header_provider=headers)

    def get(self, name: str) -> McpServerConfig:
        try:
            return self._servers[name]
        except KeyError:
            raise UnknownMcpServerError(name) from None

    def __contains__(self, name: object) -> bool:
        return name in self._servers

    def enabled(self) -> list[str]:
        with self._lock:
            return [name for name, server in self._servers.items() if server.enabled]

    def is_enabled(self, name: str) -> bool:
        """Live: a server switched off after a run was assembled is off for its next step."""
        server = self._servers.get(name)
        return server is not None and server.enabled


def _refuse_credentials(server: McpServerConfig) -> None:
    if server.headers or server.env:
        raise DelegatedServerError(
            f"MCP server {server.name!r} is reached with per-user delegation; it takes no"
            " configured headers or environment (no shared or admin credential)"
        )
