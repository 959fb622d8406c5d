"""What one user may use, decided up front and at every call: principal sources and
live rights, `prepare_runtime_context` (tools, skills, MCP servers, knowledge bases of
one user in one agent), what the model is shown (`compute_visibility`), resource checks
on tool arguments, and the per-principal `Runtime` of every agent of a tree."""

from ._context import RuntimeContext, prepare_runtime_context
from ._principals import Access, AccessLike, FixedPrincipal, LocalPrincipals, PrincipalSource
from ._resources import (
    DEFAULT_RESOURCE_ARGS,
    FileOwner,
    ResourceDenied,
    ResourceGuard,
    ResourceType,
)
from ._runtime import Runtime
from ._tools import DuplicateToolError, RuntimeTools, resolve_runtime_tools
from ._visibility import SKILL_LOADER_TOOLS, Visibility, compute_visibility

__all__ = [
    "DEFAULT_RESOURCE_ARGS",
    "SKILL_LOADER_TOOLS",
    "Access",
    "AccessLike",
    "DuplicateToolError",
    "FileOwner",
    "FixedPrincipal",
    "LocalPrincipals",
    "PrincipalSource",
    "ResourceDenied",
    "ResourceGuard",
    "ResourceType",
    "Runtime",
    "RuntimeContext",
    "RuntimeTools",
    "Visibility",
    "compute_visibility",
    "prepare_runtime_context",
    "resolve_runtime_tools",
]
