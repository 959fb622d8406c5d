"""The tool registry: stable ids, people-facing metadata, and a catalog derived on demand.

Registering a tool says only that it exists. Whether a run may execute it, whether the
model may see it and whether a call is allowed on its target are decided elsewhere (the
runtime and the access layer), so nothing here grants anything.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, overload

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool

from adk_yuxi._adk import declaration_of, function_tool_confirmation
from adk_yuxi.errors import YuxiError

from ._availability import ToolBinder, ToolSettings, ToolUnavailable
from ._metadata import ToolCatalogEntry, ToolExtraMetadata
from ._strict import StrictFunctionTool

__all__ = [
    "ToolRegistry",
    "UnknownToolError",
    "catalog",
    "default_registry",
    "register_tool",
    "tool",
]

F = TypeVar("F", bound=Callable[..., Any])

_TOOL_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")


class UnknownToolError(YuxiError, KeyError):
    """A tool id that nothing registered."""

    def __init__(self, tool_id: str) -> None:
        super().__init__(tool_id)
        self.tool_id = tool_id

    def __str__(self) -> str:
        return f"no tool is registered under the id {self.tool_id!r}"


def _strict(tool: BaseTool) -> BaseTool:
    """A plain ADK `FunctionTool` becomes a `StrictFunctionTool` over the same function;
    a subclass of it would keep running on loose arguments, so it is refused."""
    if not isinstance(tool, FunctionTool) or isinstance(tool, StrictFunctionTool):
        return tool
    if type(tool) is not FunctionTool:
        raise ValueError(
            f"tool {tool.name!r}: {type(tool).__name__} runs on unchecked arguments; register"
            " the function with @tool, or subclass StrictFunctionTool instead"
        )
    return StrictFunctionTool(
        tool.func, name=tool.name, require_confirmation=function_tool_confirmation(tool)
    )


def _parameters_schema(tool: BaseTool) -> dict[str, Any]:
    if isinstance(tool, StrictFunctionTool):
        return tool.parameters_json_schema()
    declaration = declaration_of(tool)
    if declaration is None:
        return {"type": "object", "properties": {}}
    if declaration.parameters_json_schema is not None:
        return copy.deepcopy(dict(declaration.parameters_json_schema))
    if declaration.parameters is not None:
        return declaration.parameters.json_schema.model_dump(mode="json", exclude_none=True)
    return {"type": "object", "properties": {}}


def reserved_name(name: str) -> None:
    """Raises `ValueError` for a name the knowledge server's tools answer to: a local
    tool of that name would take the model's calls meant for the server, where access
    to knowledge bases is checked."""
    from ..skills._spec import KNOWLEDGE_TOOL_NAMES

    if name in KNOWLEDGE_TOOL_NAMES:
        raise ValueError(
            f"tool {name!r}: the name is reserved for the knowledge server's tools"
            f" ({', '.join(sorted(KNOWLEDGE_TOOL_NAMES))})"
        )


class ToolRegistry:
    """Maps tool ids to shared ADK tool instances and their metadata.

    Readers get new lists and detached metadata on every call. The `BaseTool` objects in
    those lists are the execution instances themselves, shared by every run: treat them
    as read-only. Changing their name, description or function changes every agent.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, tuple[BaseTool, ToolExtraMetadata]] = {}
        self._binders: dict[str, ToolBinder] = {}
        self._version = 0

    @property
    def version(self) -> int:
        """Changes whenever a tool is registered or unregistered, so derived indexes
        (the tool retriever's) know when to rebuild."""
        return self._version

    def register(
        self,
        tool: BaseTool,
        metadata: ToolExtraMetadata | None = None,
        *,
        binder: ToolBinder | None = None,
    ) -> BaseTool:
        """Registers an already-built tool under its `name`; raises `ValueError` naming
        the tool on a duplicate id or invalid metadata, and registers nothing then.

        With `binder`, `tool` is the catalog's instance (its declaration) and runs get
        what `bind` returns for their settings, or nothing when it is unavailable."""
        if not isinstance(tool, BaseTool):
            raise TypeError(f"register_tool expects a google.adk BaseTool, got {type(tool)!r}")
        tool = _strict(tool)
        tool_id = tool.name
        if not isinstance(tool_id, str) or not _TOOL_ID.fullmatch(tool_id):
            raise ValueError(
                f"tool {tool_id!r}: the id must be 1-64 characters of letters, digits,"
                " '_', '.', ':' or '-', starting with a letter or '_' (what model APIs"
                " accept as a function name)"
            )
        reserved_name(tool_id)
        resolved = (metadata or ToolExtraMetadata()).resolved(tool_id)
        with self._lock:
            if tool_id in self._tools:
                raise ValueError(f"tool {tool_id!r} is already registered")
            self._tools[tool_id] = (tool, resolved)
            if binder is not None:
                self._binders[tool_id] = binder
            self._version += 1
        return tool

    def unregister(self, tool_id: str) -> None:
        with self._lock:
            self._binders.pop(tool_id, None)
            if self._tools.pop(tool_id, None) is None:
                raise UnknownToolError(tool_id)
            self._version += 1

    def is_configurable(self, tool_id: str) -> bool:
        """Whether runs get this tool only through its binder (settings-dependent)."""
        return tool_id in self._binders

    def bind(self, tool_id: str, settings: ToolSettings) -> BaseTool:
        """The instance a run with `settings` executes; raises `ToolUnavailable` (with
        the reason) when the tool's configuration is missing or unusable."""
        tool = self.get(tool_id)
        binder = self._binders.get(tool_id)
        if binder is None:
            return tool
        try:
            bound = binder(settings)
        except ToolUnavailable:
            raise
        except (ValueError, TypeError, KeyError) as exc:
            # A binder that trips over a malformed setting is misconfiguration, not a crash.
            raise ToolUnavailable(tool_id, f"invalid configuration: {exc}") from exc
        if not isinstance(bound, BaseTool) or bound.name != tool.name:
            raise ToolUnavailable(tool_id, "its binder returned a different tool")
        return bound

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._tools)

    def get(self, tool_id: str) -> BaseTool:
        try:
            return self._tools[tool_id][0]
        except KeyError:
            raise UnknownToolError(tool_id) from None

    def tools(self, ids: Iterable[str] | None = None) -> list[BaseTool]:
        """The shared tool instances, in registration order or in the order of `ids`."""
        if ids is None:
            with self._lock:
                return [entry[0] for entry in self._tools.values()]
        return [self.get(tool_id) for tool_id in ids]

    def metadata(self, tool_id: str) -> ToolExtraMetadata:
        try:
            return self._tools[tool_id][1].copy()
        except KeyError:
            raise UnknownToolError(tool_id) from None

    def catalog(self) -> list[ToolCatalogEntry]:
        """A catalog derived now from the current registrations; callers own the result."""
        with self._lock:
            entries = list(self._tools.items())
        return [
            ToolCatalogEntry(
                id=tool_id,
                display_name=meta.display_name or tool_id,
                category=meta.category,
                tags=list(meta.tags),
                description=tool.description or "",
                parameters=_parameters_schema(tool),
                extra=copy.deepcopy(dict(meta.extra)),
                admin_only=meta.admin_only,
                resource_args={arg: str(kind) for arg, kind in meta.resource_args.items()},
            )
            for tool_id, (tool, meta) in entries
        ]


default_registry = ToolRegistry()
"""The process-wide registry that `@tool` and `register_tool` use unless told otherwise."""


def _pick(registry: ToolRegistry | None) -> ToolRegistry:
    # Not `registry or default`: an empty registry is falsy through `__len__`.
    return default_registry if registry is None else registry


def register_tool(
    tool: BaseTool,
    metadata: ToolExtraMetadata | None = None,
    *,
    registry: ToolRegistry | None = None,
    binder: ToolBinder | None = None,
) -> BaseTool:
    """Registers a vendor's or an already-built `BaseTool` (see `ToolRegistry.register`)."""
    return _pick(registry).register(tool, metadata, binder=binder)


def catalog(registry: ToolRegistry | None = None) -> list[ToolCatalogEntry]:
    return _pick(registry).catalog()


@overload
def tool(func: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    display_name: str | None = None,
    category: str = "builtin",
    tags: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
    admin_only: bool = False,
    resource_args: Mapping[str, str] | None = None,
    registry: ToolRegistry | None = None,
) -> Callable[[F], F]: ...


def tool(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    display_name: str | None = None,
    category: str = "builtin",
    tags: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
    admin_only: bool = False,
    resource_args: Mapping[str, str] | None = None,
    registry: ToolRegistry | None = None,
) -> F | Callable[[F], F]:
    """Registers a plain function as a strictly-validated ADK function tool.

    The tool id is `name` or the function's name. The function is returned unchanged,
    so it stays directly callable in code and tests; the tool lives in the registry.
    """
    metadata = ToolExtraMetadata(
        display_name=display_name,
        category=category,
        tags=tags,
        extra=extra or {},
        admin_only=admin_only,
        resource_args=dict(resource_args or {}),
    )

    def decorate(fn: F) -> F:
        _pick(registry).register(StrictFunctionTool(fn, name=name), metadata)
        return fn

    if func is not None:
        return decorate(func)
    return decorate
