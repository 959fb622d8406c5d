"""The agent configuration a run is assembled from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._config_error import AgentConfigError, validation_problems
from ._context_policy import ContextPolicy
from ._offload_config import ToolResultOffload
from ._user_config import admin_only_fields, config_from_user

if TYPE_CHECKING:
    from ...access import Principal

__all__ = [
    "ADMIN_ONLY_FIELDS",
    "AgentConfig",
    "AgentConfigError",
    "Limits",
    "ToolRetrieval",
    "validation_problems",
]


class Limits(BaseModel):
    """What one run (one user message and everything it sets off) may spend.

    `max_llm_calls` counts the model calls of every agent in the run. When the last one
    is reached, `early_stopping="generate"` makes that call with no tools declared (but
    `set_model_response`, for an output schema) and asks for the best final answer (the
    run ends normally); `"force"` ends the run with
    a `MAX_LLM_CALLS` error event instead of making it. A tool call past
    `max_tool_calls_per_turn` does not run and ends the run (`MAX_TOOL_CALLS`). A tool
    that raises is reported to the model as `tool_failed`; past `max_tool_failures`
    such failures the run ends (`TOOL_FAILURES`). An error a tool returns (`{"error":
    ...}`) and a repaired call count as failures too. The same failing call (one tool,
    the same arguments) made `stop_after_same_failure` times ends the run at once
    (`REPEATED_TOOL_FAILURE`), and so does the same call answered with the same result
    `stop_after_same_call` times (`REPEATED_TOOL_CALL`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_llm_calls: int = Field(default=50, ge=1, le=500)
    max_tool_calls_per_turn: int = Field(default=100, ge=1, le=10_000)
    early_stopping: Literal["generate", "force"] = "generate"
    max_tool_failures: int = Field(default=3, ge=0, le=100)
    stop_after_same_failure: int = Field(default=3, ge=2, le=100)
    stop_after_same_call: int = Field(default=5, ge=2, le=100)


class ToolRetrieval(BaseModel):
    """Per-step tool retrieval: declare the always-on tools (base tools, the skill
    loader, `pinned`) plus the `top_k` visible tools that best match the user's latest
    message. It only narrows declarations; a visible tool left out may still be called."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    top_k: int = Field(default=8, ge=1, le=100)
    pinned: tuple[str, ...] = ()
    retriever: Literal["bm25", "offline"] = "bm25"
    """"bm25" (the default: microseconds a step, no extra), or "offline": the knowledge
    bases' bundled embedding model (the ``knowledge`` extra; recall@5 0.94 against 0.74
    on the bench's labelled tools, for one question embedding a step, about 30 ms)."""

    @field_validator("pinned", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("expected a list of tool names, not a string")
        return value


_ADMIN_ONLY: dict[str, Any] = {"admin_only": True}


class AgentConfig(BaseModel):
    """What an agent is made of. A list left as None means "everything this user may
    use"; an explicit list is intersected with that, never widened by it. One exception
    keeps skills meaningful: with `tools` / `mcps` left as None, a tool or MCP server that
    a skill offered by this agent depends on is reachable only through that skill
    (preloaded or loaded); name it in `tools` / `mcps` to declare it up front.

    A new field that changes what a user may use is read in `prepare_runtime_context`;
    mark it admin-only with `json_schema_extra=_ADMIN_ONLY` when it costs money or
    capacity.

    The config given to `build_app` or an `AgentCatalog` is the deployer's: every field
    binds every user as written. Fields marked admin-only (the model, the limits and the
    offloading of large tool results cost money and capacity) matter where a non-admin
    writes a config: `from_user`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    description: str = ""
    model: str | None = Field(default=None, json_schema_extra=_ADMIN_ONLY)
    instruction: str = ""
    tools: tuple[str, ...] | None = None
    knowledges: tuple[str, ...] | None = None
    mcps: tuple[str, ...] | None = None
    skills: tuple[str, ...] | None = None
    preload_skills: tuple[str, ...] = ()
    limits: Limits = Field(default_factory=Limits, json_schema_extra=_ADMIN_ONLY)
    sub_agents: tuple[str, ...] = ()
    """Agents the model may hand the conversation to (ADK `sub_agents`), by name."""
    agent_tools: tuple[str, ...] = ()
    """Agents the model calls as tools (ADK `AgentTool`), by name."""
    can_handoff_to: tuple[str, ...] | None = None
    """The transfer whitelist; None means the sub-agents, plus the parent when
    `handoff_to_parent` is set. Only names ADK can transfer to are accepted: sub-agents,
    the parent and the parent's other sub-agents."""
    handoff_to_parent: bool = False
    tool_retrieval: ToolRetrieval | None = None
    offload_tool_results: ToolResultOffload | None = Field(
        default_factory=ToolResultOffload, json_schema_extra=_ADMIN_ONLY
    )
    """Large tool results go to the session's artifacts, the model gets a preview (on by
    default; None keeps every result in the prompt)."""
    context: ContextPolicy = Field(default_factory=ContextPolicy, json_schema_extra=_ADMIN_ONLY)
    """What the model is sent of a long conversation (compaction; on by default). In a
    tree, the root agent's policy is the app's."""

    @field_validator("name")
    @classmethod
    def _identifier(cls, name: str) -> str:
        if not name.isidentifier():
            raise ValueError("the agent name must be a Python-style identifier (ADK requires it)")
        return name

    @field_validator(
        "tools",
        "knowledges",
        "mcps",
        "skills",
        "preload_skills",
        "sub_agents",
        "agent_tools",
        "can_handoff_to",
        mode="before",
    )
    @classmethod
    def _lists(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("expected a list of names, not a string")
        return tuple(dict.fromkeys(value)) if isinstance(value, list | tuple) else value

    @field_validator("sub_agents", "agent_tools", "can_handoff_to")
    @classmethod
    def _agent_names(cls, names: tuple[str, ...] | None) -> tuple[str, ...] | None:
        bad = [n for n in names or () if not n.isidentifier()]
        if bad:
            raise ValueError(f"not an agent name (a Python-style identifier): {bad}")
        return names

    @classmethod
    def from_user(
        cls,
        data: Mapping[str, Any] | AgentConfig,
        principal: Principal,
        *,
        deployer: AgentConfig | None = None,
    ) -> AgentConfig:
        """A config `principal` wrote, bounded by the deployer's: a non-admin may lower a
        limit, never raise it, and never choose the model; what they leave out of the
        admin-only fields is the deployer's. Raises `AgentConfigError`."""
        return config_from_user(cls, data, principal, deployer=deployer)

    def handoff_targets(self, parent: str | None) -> tuple[str, ...]:
        """The agents this one may transfer to when its parent (in the tree) is `parent`."""
        if self.can_handoff_to is not None:
            return self.can_handoff_to
        if self.handoff_to_parent and parent is not None:
            return (*self.sub_agents, parent)
        return self.sub_agents


ADMIN_ONLY_FIELDS: tuple[str, ...] = admin_only_fields(AgentConfig)
