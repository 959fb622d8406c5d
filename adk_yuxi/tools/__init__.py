"""The tool registry and catalog.

`@tool` registers a plain function; `register_tool` registers an already-built ADK
`BaseTool`. Registration is not permission: see `adk_yuxi.access` and the runtime.
"""

from ._availability import ToolBinder, ToolSettings, ToolUnavailable, log_unavailable
from ._metadata import ResourceType, ToolCatalogEntry, ToolExtraMetadata
from ._registry import (
    ToolRegistry,
    UnknownToolError,
    catalog,
    default_registry,
    register_tool,
    tool,
)
from ._run_access import (
    ResourceDenied,
    RunAccess,
    check_resource,
    run_access,
    run_workspace,
)
from ._strict import StrictFunctionTool, ToolArgumentsError

__all__ = [
    "ResourceDenied",
    "ResourceType",
    "RunAccess",
    "StrictFunctionTool",
    "ToolArgumentsError",
    "ToolBinder",
    "ToolCatalogEntry",
    "ToolExtraMetadata",
    "ToolRegistry",
    "ToolSettings",
    "ToolUnavailable",
    "UnknownToolError",
    "catalog",
    "check_resource",
    "default_registry",
    "log_unavailable",
    "register_tool",
    "run_access",
    "run_workspace",
    "tool",
]
