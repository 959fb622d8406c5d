"""Runtime assembly: from a user and an agent config to an ADK `App` whose model sees
only what it may use now, and whose every call is decided on the rights of that moment.

Four subpackages, each importing only those listed before it:

- `config`: what an agent is made of (`AgentConfig`, the configs users write, the YAML
  `AgentCatalog`, the checked `AgentTree`);
- `rights`: what one user may use (principal sources, `LiveRights`,
  `prepare_runtime_context`, `compute_visibility`, resource checks, the per-principal
  `Runtime` of each agent of a tree);
- `authorization`: every call of a run decided on the rights of that moment (the
  `AuthorizationPlugin`, run bindings, budgets, stops, refusals, agent tools and
  handoffs in trees, what a tool reaches of its run);
- `assembly`: from values to an `App` (`build_app`, `Toolbox`, the capabilities
  `RunRecords`, `Offload` and `Compaction`, the checks before anything runs, guards).

Four things stay distinct: a tool that is registered (`adk_yuxi.tools`), executable in
this run (`resolve_runtime_tools`), visible to the model now (`compute_visibility`), and
a call authorized on its target (`AuthorizationPlugin`, `ResourceGuard`).

One path: `build_app(agent, access, toolbox=..., capabilities=...)` gives the agent one
`YuxiToolset` and the app one `AuthorizationPlugin`. The plugin binds each run to the
`Runtime` of its principal (`authorization/_binding`, looked up by invocation id;
runtimes cached per principal in `rights/_cache`) and checks every call on
`LiveRights`. Where to extend:

- a base tool (never gated): add it to `adk_yuxi.tools.base` (`BASE_TOOLS`, the one
  list) and to the `base_tools` of the capability that serves it;
- something an app can do with its own plugins and tools: a `Capability`
  (`assembly/_capabilities`), listed in `build_app(capabilities=...)`;
- what the model is sent of a long conversation: `ContextPolicy`
  (`config/_context_policy`), wired as ADK's event compaction by `compaction_config`
  (`assembly/_compaction`);
- an `AgentConfig` field: `config/_config`, read in `prepare_runtime_context` (what a
  user may use) or from `runtime.context.config` in the plugin (how a run is checked);
- a plugin hook or a per-call check: `AuthorizationPlugin` (`authorization/_plugin`),
  reading the run with `bindings.get(invocation_id)`;
- a per-run counter others charge: `RunBudget` (`authorization/_budget`), reached from a
  tool or callback with `run_budget(ctx)`;
- what happens to a tool result on its way to the model: after the tool ran, in a
  plugin of its own (`assembly/_offload` stores large results, `adk_yuxi.mcp` trims MCP
  ones);
- a model-facing error: `adk_yuxi.errors.tool_error` with a `ToolErrorCode`; a run that
  must end: a `RunStopped` subclass (`authorization/_errors`) set as `run.stop`.

Agent trees (`sub_agents`, `agent_tools`, `can_handoff_to`): configs by name in an
`AgentCatalog`, checked as an `AgentTree`; a principal's runtimes are a `TreeRuntime`
(one `Runtime` per agent it reaches, `rights/_tree_runtime`); the plugin decides each
call on the runtime of the agent making it (`authorization/_tree_checks`), ties the
nested run of an `AgentTool` to its caller (`authorization/_tree_calls`) and narrows
handoffs (`rights/_handoff`).
"""

from .assembly import (
    OFFLOAD_PLUGIN_NAME,
    Capability,
    Compaction,
    GuardedSummarizer,
    Offload,
    PromptEstimatePlugin,
    RunRecords,
    Toolbox,
    ToolResultOffloadPlugin,
    build_app,
    compaction_config,
    host_run_config,
    telemetry_recorded,
)
from .authorization import (
    CAPABILITY_LIMITED,
    FINAL_ANSWER_INSTRUCTION,
    PLUGIN_NAME,
    AgentAssemblyFailed,
    AuthorizationPlugin,
    AuthorizationUnavailable,
    DelegationStopped,
    LlmCallLimitReached,
    Refusal,
    RefusalHook,
    Run,
    RunBudget,
    ToolCallLimitReached,
    ToolFailureLimitReached,
    check_resource,
    current_agent_runtime,
    current_run,
    run_budget,
)
from .config import (
    ADMIN_ONLY_FIELDS,
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_COMPACT_AT_EVENTS,
    AgentCatalog,
    AgentConfig,
    AgentConfigError,
    AgentTree,
    AgentTreeError,
    ContextPolicy,
    Limits,
    ToolResultOffload,
    ToolRetrieval,
    UnknownAgentError,
    load_agent_config,
)
from .rights import (
    DEFAULT_RESOURCE_ARGS,
    SKILL_LOADER_TOOLS,
    Access,
    AccessLike,
    DuplicateToolError,
    FileOwner,
    FixedPrincipal,
    LocalPrincipals,
    PrincipalSource,
    ResourceDenied,
    ResourceGuard,
    ResourceType,
    Runtime,
    RuntimeContext,
    RuntimeTools,
    Visibility,
    compute_visibility,
    prepare_runtime_context,
    resolve_runtime_tools,
)

__all__ = [
    "ADMIN_ONLY_FIELDS",
    "CAPABILITY_LIMITED",
    "DEFAULT_BUDGET_TOKENS",
    "DEFAULT_COMPACT_AT_EVENTS",
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
    "PromptEstimatePlugin",
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
