"""What an agent is made of: `AgentConfig` (limits, context policy, offload thresholds),
the configs users write (`AgentConfig.from_user`), the YAML catalog and the checked
agent tree. Pure values: nothing here knows a user or a run."""

from ._catalog import AgentCatalog, UnknownAgentError, load_agent_config
from ._config import ADMIN_ONLY_FIELDS, AgentConfig, AgentConfigError, Limits, ToolRetrieval
from ._context_policy import DEFAULT_BUDGET_TOKENS, DEFAULT_COMPACT_AT_EVENTS, ContextPolicy
from ._offload_config import ToolResultOffload
from ._tree import AgentTree, AgentTreeError

__all__ = [
    "ADMIN_ONLY_FIELDS",
    "DEFAULT_BUDGET_TOKENS",
    "DEFAULT_COMPACT_AT_EVENTS",
    "AgentCatalog",
    "AgentConfig",
    "AgentConfigError",
    "AgentTree",
    "AgentTreeError",
    "ContextPolicy",
    "Limits",
    "ToolResultOffload",
    "ToolRetrieval",
    "UnknownAgentError",
    "load_agent_config",
]
