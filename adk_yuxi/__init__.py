"""adk_yuxi: the Yuxi platform's tool system on Google's Agent Development Kit.

The entry names live here; an app is assembled in one call::

    from adk_yuxi import AgentConfig, LocalPrincipals, build_app

    app = build_app(AgentConfig(name="helper", tools=("calculate",)), LocalPrincipals())

They are imported on first use, so `import adk_yuxi` stays cheap (a CLI, a test
collection and a type checker import it without building anything).
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not `typing`'s: importing typing alone costs more than this module

__version__ = "0.1.0"

# name -> the module that defines it (its package's public name).
_ENTRY: dict[str, str] = {
    "Access": "adk_yuxi.runtime",
    "AccessRepository": "adk_yuxi.access",
    "AgentCatalog": "adk_yuxi.runtime",
    "AgentConfig": "adk_yuxi.runtime",
    "AgentConfigError": "adk_yuxi.runtime",
    "Capability": "adk_yuxi.runtime",
    "Compaction": "adk_yuxi.runtime",
    "ContextPolicy": "adk_yuxi.runtime",
    "Limits": "adk_yuxi.runtime",
    "LocalPrincipals": "adk_yuxi.runtime",
    "Offload": "adk_yuxi.runtime",
    "Principal": "adk_yuxi.access",
    "PromptEstimatePlugin": "adk_yuxi.runtime",
    "RunRecords": "adk_yuxi.runtime",
    "RunStopped": "adk_yuxi.errors",
    "ShareConfig": "adk_yuxi.access",
    "ToolRegistry": "adk_yuxi.tools",
    "ToolResultOffload": "adk_yuxi.runtime",
    "ToolRetrieval": "adk_yuxi.runtime",
    "ToolSettings": "adk_yuxi.tools",
    "Toolbox": "adk_yuxi.runtime",
    "YuxiError": "adk_yuxi.errors",
    "build_app": "adk_yuxi.runtime",
    "load_agent_config": "adk_yuxi.runtime",
    "per_user_workspaces": "adk_yuxi.ledger",
    "tool": "adk_yuxi.tools",
}

__all__ = [
    "Access",
    "AccessRepository",
    "AgentCatalog",
    "AgentConfig",
    "AgentConfigError",
    "Capability",
    "Compaction",
    "ContextPolicy",
    "Limits",
    "LocalPrincipals",
    "Offload",
    "Principal",
    "PromptEstimatePlugin",
    "RunRecords",
    "RunStopped",
    "ShareConfig",
    "ToolRegistry",
    "ToolResultOffload",
    "ToolRetrieval",
    "ToolSettings",
    "Toolbox",
    "YuxiError",
    "__version__",
    "build_app",
    "load_agent_config",
    "per_user_workspaces",
    "tool",
]

if TYPE_CHECKING:
    from typing import Any

    from .access import AccessRepository, Principal, ShareConfig
    from .errors import RunStopped, YuxiError
    from .ledger import per_user_workspaces
    from .runtime import (
        Access,
        AgentCatalog,
        AgentConfig,
        AgentConfigError,
        Capability,
        Compaction,
        ContextPolicy,
        Limits,
        LocalPrincipals,
        Offload,
        PromptEstimatePlugin,
        RunRecords,
        Toolbox,
        ToolResultOffload,
        ToolRetrieval,
        build_app,
        load_agent_config,
    )
    from .tools import ToolRegistry, ToolSettings, tool


def __getattr__(name: str) -> Any:
    module = _ENTRY.get(name)
    if module is None:
        raise AttributeError(f"module 'adk_yuxi' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # once: later reads are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_ENTRY})
