"""Capabilities: what an app can do beyond its agents' tools, each a unit that brings its
plugins *and* the base tools that act through them.

`build_app` takes a list of them. `RunRecords` adds the run ledger (every run recorded
with its lease; waiting points, marks, presented files) and the three base tools that
need it; `Offload` stores large tool results as artifacts and brings `read_tool_result`;
`Compaction` sets ADK's event compaction from the root config's `ContextPolicy`. The
last two are on in every app: list one to configure it. A plain ADK `BasePlugin` is a
capability too (it brings no tools). Without records, the tools that need them are not
shown to the model at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.models.base_llm import BaseLlm
from google.adk.plugins.base_plugin import BasePlugin
from sqlalchemy.engine import URL

from ..._sql.store import SqlStore
from ...access import AccessRepository
from ...ledger import LedgerPlugin, WorkspaceRoot
from ...models import resolve_model
from ..config._context_policy import ContextPolicy
from ._compaction import compaction_config
from ._deferred_compaction import compaction_plugins
from ._offload import OFFLOAD_PLUGIN_NAME, ToolResultOffloadPlugin

if TYPE_CHECKING:
    from ..authorization._plugin import AuthorizationPlugin

__all__ = ["Assembly", "Capability", "Compaction", "Offload", "RunRecords"]

Stage = Literal["first", "early", "late", "last"]


@dataclass(frozen=True)
class Assembly:
    """What a capability may build on: the app being assembled."""

    authorization: AuthorizationPlugin
    repository: AccessRepository | None
    workspace: str | Path | None
    policy: ContextPolicy
    root_model: BaseLlm
    compaction: EventsCompactionConfig | None = None
    """ADK's events compaction of the app, once the capabilities have set it."""


class Capability:
    """A unit of an app: its plugins and the base tools (`adk_yuxi.tools.base`) that
    act through them. `stage` orders the plugins: ``early`` right after the
    authorization plugin (what must see every run first), ``late`` after the guards,
    ``last`` at the very end (a plugin that answers with a new result ends ADK's chain);
    ``first`` before everything but the authorization plugin (what must see every model
    call, such as the prompt-size estimate compaction reads).
    """

    stage: ClassVar[Stage] = "late"
    base_tools: ClassVar[tuple[str, ...]] = ()

    def plugins(self, assembly: Assembly) -> Sequence[BasePlugin]:
        return ()

    def compaction(self, assembly: Assembly) -> EventsCompactionConfig | None:
        """ADK's events compaction, when this capability sets it."""
        return None


@dataclass(frozen=True)
class RunRecords(Capability):
    """The run ledger on `store` (a database URL or a `SqlStore`): every run recorded
    before it starts, under `worker`'s lease of `lease_seconds`, and closed with its
    outcome. It brings `ask_user_question` (durable waiting points),
    `mark_for_improvement` (marks, re-checked against the access repository when the
    app's access is one) and `present_artifacts` (files from `workspaces`: one folder,
    or user id -> folder such as `per_user_workspaces(root)`; by default the toolbox's
    workspace; none: presenting is unavailable)."""

    store: SqlStore | str | URL
    worker: str | None = None
    lease_seconds: float = 120.0
    workspaces: WorkspaceRoot | None = None

    stage: ClassVar[Stage] = "early"
    base_tools: ClassVar[tuple[str, ...]] = (
        "ask_user_question",
        "mark_for_improvement",
        "present_artifacts",
    )

    def __post_init__(self) -> None:
        if self.lease_seconds <= 0:
            raise ValueError("lease_seconds must be positive")

    def plugins(self, assembly: Assembly) -> Sequence[BasePlugin]:
        return [
            LedgerPlugin(
                self.store,
                repository=assembly.repository,
                workspace=self.workspaces if self.workspaces is not None else assembly.workspace,
                worker=self.worker,
                lease_seconds=self.lease_seconds,
            )
        ]


@dataclass(frozen=True)
class Offload(Capability):
    """Tool results larger than an agent's `offload_tool_results` threshold are saved as
    artifacts of the session and the model gets a preview it can read on with
    `read_tool_result`. On in every app; the thresholds are the agent configs'."""

    name: str = OFFLOAD_PLUGIN_NAME

    stage: ClassVar[Stage] = "last"
    base_tools: ClassVar[tuple[str, ...]] = ("read_tool_result",)

    def plugins(self, assembly: Assembly) -> Sequence[BasePlugin]:
        return [ToolResultOffloadPlugin(assembly.authorization, name=self.name)]


@dataclass(frozen=True)
class Compaction(Capability):
    """ADK's event compaction from the root config's `ContextPolicy` (on by default).
    Summaries are written by `summarizer` if given (a model, a model name or a ready
    summarizer; tests pass one), else by the policy's `summarizer_model`, else by the
    root agent's model."""

    summarizer: BaseLlm | BaseEventsSummarizer | str | None = None

    stage: ClassVar[Stage] = "first"

    def compaction(self, assembly: Assembly) -> EventsCompactionConfig | None:
        chosen = self.summarizer
        if chosen is None and assembly.policy.summarizer_model is not None:
            chosen = assembly.policy.summarizer_model
        if isinstance(chosen, str):
            chosen = resolve_model(chosen)
        return compaction_config(
            assembly.policy, chosen or assembly.root_model, agent_model=assembly.root_model
        )

    def plugins(self, assembly: Assembly) -> Sequence[BasePlugin]:
        """The prompt-size estimate token-threshold compaction reads (for models that
        report no usage) and the deferred compaction (a history over the token threshold
        or the event count), when it compacts by token threshold."""
        return compaction_plugins(assembly.compaction, assembly.policy.compact_at_events)


DEFAULT_CAPABILITIES: tuple[Capability, ...] = (Offload(), Compaction())
"""On in every app unless a capability of the same type is listed."""
