"""What the registry knows about a tool beyond what ADK's `BaseTool` carries."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

__all__ = ["SECURITY_KEYS", "ResourceType", "ToolCatalogEntry", "ToolExtraMetadata"]


class ResourceType(StrEnum):
    """What a tool argument names, for the runtime's resource guard."""

    KNOWLEDGE_BASE = "knowledge_base"
    FILE = "file"
    PATH = "path"


VIRTUAL_ROOT = "/workspace"
"""Where the model sees the user's workspace: `/workspace/a.pdf` and `a.pdf` name one file."""


def workspace_relative(path: str) -> str:
    """A path under `VIRTUAL_ROOT` made relative to the workspace; any other path as given,
    so the guard's own rules (relative, no `..`, inside after symlinks) still decide."""
    if path == VIRTUAL_ROOT:
        return "."
    prefix = VIRTUAL_ROOT + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


SECURITY_KEYS = frozenset({"admin_only", "resource_args"})
"""Typed fields of `ToolExtraMetadata`; refused as free keys of `extra`, where they would
look effective and be ignored."""


@dataclass(frozen=True)
class ToolExtraMetadata:
    """People-facing facts about a tool: how a catalog groups, filters and names it.

    The tool id (the `BaseTool.name`) is what code and the model protocol use; it never
    changes once shipped. `display_name` is for people and may be translated or renamed
    freely, which is why the two are kept apart.
    """

    display_name: str | None = None
    category: str = "builtin"
    tags: Sequence[str] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    admin_only: bool = False
    """Only administrators may use the tool (checked at assembly and at every call)."""
    resource_args: Mapping[str, ResourceType | str] = field(default_factory=dict)
    """Argument name -> `ResourceType`, checked at every call on top of the default
    names (`kb_id`, `kb_ids`, `file_id`, `file_ids`, `path`)."""

    def resolved(self, tool_id: str) -> ToolExtraMetadata:
        """Validates the metadata for `tool_id` and returns a normalised, detached copy.

        Raises `ValueError` naming the tool, so a bad registration fails at import time
        rather than when a catalog is rendered.
        """
        display_name = tool_id if self.display_name is None else self.display_name
        if not isinstance(display_name, str) or not display_name.strip():
            raise ValueError(f"tool {tool_id!r}: display_name must be a non-empty string")
        if not isinstance(self.category, str) or not self.category.strip():
            raise ValueError(f"tool {tool_id!r}: category must be a non-empty string")
        if isinstance(self.tags, str):
            raise ValueError(f"tool {tool_id!r}: tags must be a list of strings, not a string")
        tags = tuple(self.tags)
        for tag in tags:
            if not isinstance(tag, str) or not tag.strip():
                raise ValueError(f"tool {tool_id!r}: every tag must be a non-empty string")
        if not isinstance(self.admin_only, bool):
            raise ValueError(f"tool {tool_id!r}: admin_only must be a bool")
        misplaced = sorted(SECURITY_KEYS.intersection(self.extra))
        if misplaced:
            raise ValueError(
                f"tool {tool_id!r}: {misplaced} are typed fields of ToolExtraMetadata,"
                " not keys of extra"
            )
        try:
            resource_args = {
                str(arg): ResourceType(kind) for arg, kind in dict(self.resource_args).items()
            }
        except ValueError as exc:
            raise ValueError(
                f"tool {tool_id!r}: resource_args values must be one of"
                f" {[t.value for t in ResourceType]} ({exc})"
            ) from None
        try:
            # A round trip both proves the values are JSON and detaches nested containers
            # from the caller, so later edits to their dict cannot reach the registry.
            extra = json.loads(json.dumps(dict(self.extra), allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"tool {tool_id!r}: metadata values must be JSON-serialisable ({exc})"
            ) from exc
        return ToolExtraMetadata(
            display_name=display_name.strip(),
            category=self.category.strip(),
            tags=tags,
            extra=extra,
            admin_only=self.admin_only,
            resource_args=MappingProxyType(resource_args),
        )

    def copy(self) -> ToolExtraMetadata:
        """A copy whose `extra` can be changed without touching the registry's."""
        return ToolExtraMetadata(
            display_name=self.display_name,
            category=self.category,
            tags=tuple(self.tags),
            extra=json.loads(json.dumps(dict(self.extra))),
            admin_only=self.admin_only,
            resource_args=MappingProxyType(dict(self.resource_args)),
        )


@dataclass
class ToolCatalogEntry:
    """One row of a catalog; built fresh for every `catalog()` call, so callers own it."""

    id: str
    display_name: str
    category: str
    tags: list[str]
    description: str
    parameters: dict[str, Any]
    extra: dict[str, Any]
    admin_only: bool = False
    resource_args: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "display_name": self.display_name,
            "category": self.category,
            "tags": list(self.tags),
            "description": self.description,
            "parameters": json.loads(json.dumps(self.parameters)),
            "extra": json.loads(json.dumps(self.extra)),
            "admin_only": self.admin_only,
            "resource_args": dict(self.resource_args),
        }
