"""The one configuration a host API is built from."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin
from pydantic import BaseModel

from adk_yuxi.runtime import (
    AgentCatalog,
    AgentConfig,
    Capability,
    RefusalHook,
    RunRecords,
    Toolbox,
)

if TYPE_CHECKING:
    from adk_yuxi.knowledge import Embedder

__all__ = ["ApiConfig"]


@dataclass(frozen=True)
class ApiConfig:
    """Database, agents, workspaces and model of one API process.

    `agents` are the configs it serves, as one catalog (an `AgentCatalog`, or configs):
    every root agent (one no other agent names) is an agent of the API, served with
    its tree, its sub-agents and agent tools reached through it; each agent still needs
    its share in the access database for a user to run or reach it. `workspace_root`
    holds one directory per user for the presented files (none: `present_artifacts` is
    unavailable); `model` overrides every agent's model (a name, or a `BaseLlm` such
    as a test's `ScriptedLlm`); `blob_dir` holds the artifact payloads (default: beside
    an SQLite file, else `.yuxi/blobs`; workers sharing a database must share it).
    `lease_seconds` is how long a run outlives a dead worker before any worker closes
    it as failed; `cancel_poll_seconds` bounds how late a cancel request made through
    another worker is noticed. `heartbeat_seconds`: a stream (a run's, or a followed
    session's) that sent nothing for that long sends a `: heartbeat` comment;
    `follow_seconds`: how long `GET …/events` follows a run before it ends (with the
    run's status as of then; the client follows again from its last event id).

    Every agent's App is built by `build_app` from the same values a user's own app
    is: `toolbox` (registry, skills, MCP servers, tool settings, retriever; without one
    an agent has the built-in tools only, and an agent naming a skill or an MCP server
    is refused at start), `capabilities` (after the host's own run records, which come
    from `database_url`, `worker`, `lease_seconds` and `workspace_root`: a
    `Compaction(summarizer=...)`, plain ADK plugins, ...), `output_schema` and
    `on_refusal`. A host serving knowledge agents passes the catalog and servers
    `install_knowledge` filled (`yuxi serve api --knowledge-url`). `memory_embedder`
    (opt-in, e.g. `embedder_from_env()`) makes memory search fuse full text with
    embeddings (see `SqlMemoryService`).
    """

    database_url: str
    agents: Sequence[AgentConfig] | AgentCatalog
    workspace_root: Path | None = None
    model: BaseLlm | str | None = None
    blob_dir: Path | None = None
    max_body_bytes: int = 1 << 20
    max_header_bytes: int = 16 * 1024
    worker: str | None = None
    lease_seconds: float = 120.0
    page_size_max: int = 100
    poll_seconds: float = 0.25
    heartbeat_seconds: float = 15.0
    follow_seconds: float = 1800.0
    cancel_poll_seconds: float = 0.5
    idempotency_ttl_seconds: float | None = 86400.0
    toolbox: Toolbox = field(default_factory=Toolbox)
    capabilities: Sequence[Capability | BasePlugin] = ()
    output_schema: type[BaseModel] | None = None
    on_refusal: RefusalHook | None = None
    memory_embedder: Embedder | None = None

    def __post_init__(self) -> None:
        names = [a.name for a in self.agents]
        if len(set(names)) != len(names):
            raise ValueError("agent names must be unique")
        if self.max_body_bytes < 1024:
            raise ValueError("max_body_bytes must be at least 1024")
        if self.lease_seconds <= 0 or self.cancel_poll_seconds <= 0:
            raise ValueError("lease_seconds and cancel_poll_seconds must be positive")
        if min(self.heartbeat_seconds, self.follow_seconds, self.poll_seconds) <= 0:
            raise ValueError("heartbeat_seconds, follow_seconds and poll_seconds must be positive")
        if self.max_header_bytes < 1024:
            raise ValueError("max_header_bytes must be at least 1024")
        if self.idempotency_ttl_seconds is not None and self.idempotency_ttl_seconds <= 0:
            raise ValueError("idempotency_ttl_seconds must be positive (or None: kept for good)")
        if any(isinstance(c, RunRecords) for c in self.capabilities):
            raise ValueError("the host records its runs itself (database_url, worker, lease)")

    def check_folders(self) -> None:
        """Creates the workspace and blob folders if missing and checks that this process
        can write there: before serving, so a wrong path is one line at start and not a
        tool failing in every run."""
        for what, folder in (("workspace", self.workspace_root), ("blob", self.blob_dir)):
            if folder is None:
                continue
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ValueError(
                    f"cannot create the {what} folder {folder}: {exc.strerror}"
                ) from None
            if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
                raise ValueError(
                    f"the {what} folder {folder} is not a folder this process can write"
                )
