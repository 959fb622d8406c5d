"""Resource checks on tool arguments: knowledge bases, files and workspace paths.

The plugin runs these on every call, from the argument names a tool uses (by convention
and from its registry metadata), against the rights of that moment; tools call
`check_resource` themselves as well, so a tool reached some other way still refuses.
Refusals say which argument was refused, never which resources exist.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ...tools import ResourceType
from ...tools._metadata import workspace_relative
from ...tools._run_access import ResourceDenied
from ._context import RuntimeContext
from ._decisions import kb_decision

__all__ = [
    "DEFAULT_RESOURCE_ARGS",
    "FileOwner",
    "ResourceDenied",
    "ResourceGuard",
    "ResourceType",
]

logger = logging.getLogger("adk_yuxi.runtime.resources")

DEFAULT_RESOURCE_ARGS: Mapping[str, ResourceType] = {
    "kb_id": ResourceType.KNOWLEDGE_BASE,
    "kb_ids": ResourceType.KNOWLEDGE_BASE,
    "file_id": ResourceType.FILE,
    "file_ids": ResourceType.FILE,
    "path": ResourceType.PATH,
}
"""Argument names checked on every tool, local or MCP. A tool names more through
`ToolExtraMetadata(resource_args={"arg": "knowledge_base"})`."""

FileOwner = Callable[[str], Awaitable[str | None]]
"""Maps a file id to the knowledge base holding it, or None when unknown."""


class ResourceGuard:
    """Decides whether one value names a resource this run may touch.

    Paths must be relative and stay inside `workspace` after symlinks are resolved;
    without a workspace every path is refused, and so is a path whose resolution fails
    (a symlink loop). File ids are allowed only when `file_owner` places them in a
    visible knowledge base; without it they are refused. Failing closed is the point:
    an unconfigured check never grants.
    """

    def __init__(
        self,
        context: RuntimeContext,
        *,
        workspace: str | Path | None = None,
        file_owner: FileOwner | None = None,
    ) -> None:
        self._context = context
        self._workspace = Path(workspace).resolve() if workspace is not None else None
        self._file_owner = file_owner
        self._registry = context.registry
        self._arguments: dict[str, Mapping[str, ResourceType]] = {}

    @property
    def workspace(self) -> Path | None:
        return self._workspace

    async def allows(self, kind: ResourceType, value: Any) -> str | None:
        """None when allowed, else the reason (for logs, not for the model)."""
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str) or not item:
                return f"{kind.value} must be a non-empty string"
            reason = await self._allows_one(kind, item)
            if reason is not None:
                return reason
        return None

    async def _allows_one(self, kind: ResourceType, value: str) -> str | None:
        if kind is ResourceType.KNOWLEDGE_BASE:
            decision = kb_decision(self._context, value)
            return None if decision.allowed else f"{decision.reason} ({value!r})"
        if kind is ResourceType.FILE:
            if self._file_owner is None:
                return "no file resolver configured"
            owner = await self._file_owner(value)
            if owner is None or not kb_decision(self._context, owner).allowed:
                return f"file {value!r} not in a visible knowledge base"
            return None
        return self._path_reason(value)

    def _path_reason(self, value: str) -> str | None:
        if self._workspace is None:
            return "no workspace configured"
        pure = PurePosixPath(workspace_relative(value.replace("\\", "/")))
        if pure.is_absolute() or ".." in pure.parts or "\x00" in value:
            return f"path {value!r} is absolute or climbs out"
        try:
            resolved = (self._workspace / pure).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            # A symlink loop, a name too long: the reason is logged, never shown.
            return f"path {value!r} cannot be resolved ({type(exc).__name__})"
        if not resolved.is_relative_to(self._workspace):
            return f"path {value!r} resolves outside the workspace"
        return None

    def arguments_of(self, tool_name: str) -> Mapping[str, ResourceType]:
        names = self._arguments.get(tool_name)
        if names is None:
            merged = dict(DEFAULT_RESOURCE_ARGS)
            if tool_name in self._registry:
                declared = self._registry.metadata(tool_name).resource_args
                merged.update({arg: ResourceType(kind) for arg, kind in declared.items()})
            names = self._arguments[tool_name] = merged
        return names

    async def check_call(self, tool_name: str, args: Mapping[str, Any]) -> None:
        """Raises `ResourceDenied` for the first argument naming a forbidden resource."""
        for argument, kind in self.arguments_of(tool_name).items():
            if argument in args and args[argument] is not None:
                reason = await self.allows(kind, args[argument])
                if reason is not None:
                    raise ResourceDenied(argument, kind, reason)
