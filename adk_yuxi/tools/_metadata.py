"""What the registry knows about a tool beyond what ADK's `BaseTool` carries."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolCatalogEntry", "ToolExtraMetadata"]


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
        )

    def copy(self) -> ToolExtraMetadata:
        """A copy whose `extra` can be changed without touching the registry's."""
        return ToolExtraMetadata(
            display_name=self.display_name,
            category=self.category,
            tags=tuple(self.tags),
            extra=json.loads(json.dumps(dict(self.extra))),
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "display_name": self.display_name,
            "category": self.category,
            "tags": list(self.tags),
            "description": self.description,
            "parameters": json.loads(json.dumps(self.parameters)),
            "extra": json.loads(json.dumps(self.extra)),
        }
