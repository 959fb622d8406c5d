"""Runtime assembly: from a user and an agent config to an ADK `App` whose model sees
only what it may use now, and whose every call is decided on the rights of that moment.

Four things stay distinct: a tool that is registered (`adk_yuxi.tools`), executable in
this run (`resolve_runtime_tools`), visible to the model now (`compute_visibility`), and
a call authorized on its target (`AuthorizationPlugin`, `ResourceGuard`).

One path: `build_app(agent, access, toolbox=..., capabilities=...)` gives the agent one
`YuxiToolset` and the app one `AuthorizationPlugin`. The plugin binds each run to the
`Runtime` of its principal
(`_binding`, looked up by invocation id; runtimes cached per principal in `_cache`)
and checks every call on `LiveRights`. Where to extend:

- a base tool (never gated): add it to `adk_yuxi.tools.base` (`BASE_TOOLS`, the one
  list) and to the `base_tools` of the capability that serves it (`_capabilities`);
- something an app can do with its own plugins and tools: a `Capability`
  (`_capabilities`), listed in `build_app(capabilities=...)`;
- what the model is sent of a long conversation: `ContextPolicy` (`_context_policy`),
  wired as ADK's event compaction by `compaction_config` (`_compaction`);
- an `AgentConfig` field: `_config`, read in `prepare_runtime_context` (what a user
  may use) or from `runtime.context.config` in the plugin (how a run is checked);
- a plugin hook or a per-call check: `AuthorizationPlugin` (`_plugin`), reading the run
  with `bindings.get(invocation_id)`;
- a per-run counter others charge: `RunBudget` (`_budget`), reached from a tool or
  callback with `run_budget(ctx)`;
- what happens to a tool result on its way to the model: after the tool ran, in a
  plugin of its own (`_offload` stores large results, `adk_yuxi.mcp` trims MCP ones);
- a model-facing error: `adk_yuxi.errors.tool_error` with a `ToolErrorCode`; a run that
  must end: a `RunStopped` subclass (`_errors`) set as `run.stop`.

Agent trees (`sub_agents`, `agent_tools`, `can_handoff_to`): configs by name in an
`AgentCatalog`, checked as an `AgentTree`; a principal's runtimes are a `TreeRuntime`
(one `Runtime` per agent it reaches, `_tree_runtime`); the plugin decides each call on
the runtime of the agent making it (`_tree_checks`), ties the nested run of an
`AgentTool` to its caller (`_tree_calls`) and narrows handoffs (`_handoff`).
"""

from ._access import check_resource, current_agent_runtime, current_run, run_budget
from ._app import build_app
from ._binding import Run
from ._budget import RunBudget
from ._capabilities import Capability, Compaction, Offload, RunRecords
from ._catalog import AgentCatalog, UnknownAgentError, load_agent_config
from ._compaction import GuardedSummarizer, compaction_config
from ._config import ADMIN_ONLY_FIELDS, AgentConfig, AgentConfigError, Limits, ToolRetrieval
from ._context import RuntimeContext, prepare_runtime_context
from ._context_policy import DEFAULT_BUDGET_TOKENS, ContextPolicy
from ._errors import (
    AgentAssemblyFailed,
    AuthorizationUnavailable,
    DelegationStopped,
    LlmCallLimitReached,
    ToolCallLimitReached,
    ToolFailureLimitReached,
)
from ._offload import OFFLOAD_PLUGIN_NAME, ToolResultOffloadPlugin
from ._offload_config import ToolResultOffload
from ._plugin import FINAL_ANSWER_INSTRUCTION, PLUGIN_NAME, AuthorizationPlugin
from ._principals import Access, AccessLike, FixedPrincipal, LocalPrincipals, PrincipalSource
from ._refusals import CAPABILITY_LIMITED, Refusal, RefusalHook
from ._resources import (
    DEFAULT_RESOURCE_ARGS,
    FileOwner,
    ResourceDenied,
    ResourceGuard,
    ResourceType,
)
from ._run_config import host_run_config, telemetry_recorded
from ._runtime import Runtime
from ._toolbox import Toolbox
from ._tools import DuplicateToolError, RuntimeTools, resolve_runtime_tools
from ._tree import AgentTree, AgentTreeError
from ._visibility import SKILL_LOADER_TOOLS, Visibility, compute_visibility

__all__ = [
    "ADMIN_ONLY_FIELDS",
    "CAPABILITY_LIMITED",
    "DEFAULT_BUDGET_TOKENS",
    "DEFAULT_RESOURCE_ARGS",
    "FINAL_ANSWER_INSTRUCTION",
    "OFFLOAD_PLUGIN_NAME",
    "PLUGIN_NAME",
    "SKILL_LOADER_TOOLS",
    "Access",
    "AccessLike",
    "AgentAssemblyFailed",
    "AgentCatalog",
    "AgentConfig",
    "AgentConfigError",
    "AgentTree",
    "AgentTreeError",
    "AuthorizationPlugin",
    "AuthorizationUnavailable",
    "Capability",
    "Compaction",
    "ContextPolicy",
    "DelegationStopped",
    "DuplicateToolError",
    "FileOwner",
    "FixedPrincipal",
    "GuardedSummarizer",
    "Limits",
    "LlmCallLimitReached",
    "LocalPrincipals",
    "Offload",
    "PrincipalSource",
    "Refusal",
    "RefusalHook",
    "ResourceDenied",
    "ResourceGuard",
    "ResourceType",
    "Run",
    "RunBudget",
    "RunRecords",
    "Runtime",
    "RuntimeContext",
    "RuntimeTools",
    "ToolCallLimitReached",
    "ToolFailureLimitReached",
    "ToolResultOffload",
    "ToolResultOffloadPlugin",
    "ToolRetrieval",
    "Toolbox",
    "UnknownAgentError",
    "Visibility",
    "build_app",
    "check_resource",
    "compaction_config",
    "compute_visibility",
    "current_agent_runtime",
    "current_run",
    "host_run_config",
    "load_agent_config",
    "prepare_runtime_context",
    "resolve_runtime_tools",
    "run_budget",
    "telemetry_recorded",
]
