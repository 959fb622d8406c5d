"""Every use of an ADK private name, in one place.

ADK offers no public way to do a few things we need (reach the invocation of a tool
call, keep a toolset out of ADK's per-invocation cache, hook function-tool argument
handling and its declaration). Each such touch is a small function or base class here,
and `PINNED` lists every private name so `tests/test_adk_private_names.py` checks them
against the installed ADK: an upgrade that renames one fails there, in one place.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool
from google.genai import types
from typing_extensions import override

__all__ = [
    "PINNED",
    "HookedFunctionTool",
    "declaration_of",
    "disable_invocation_cache",
    "function_tool_confirmation",
    "function_tool_context_param",
    "invocation_of",
]

PINNED: tuple[tuple[str, str, str, str], ...] = (
    # (module, class, private name, "attribute" of an instance | "method" of the class)
    ("google.adk.agents.readonly_context", "ReadonlyContext", "_invocation_context", "attribute"),
    ("google.adk.tools.base_toolset", "BaseToolset", "_use_invocation_cache", "attribute"),
    ("google.adk.tools.base_tool", "BaseTool", "_get_declaration", "method"),
    ("google.adk.tools.function_tool", "FunctionTool", "_get_declaration", "method"),
    ("google.adk.tools.function_tool", "FunctionTool", "_preprocess_args", "method"),
    ("google.adk.tools.function_tool", "FunctionTool", "_context_param_name", "attribute"),
    ("google.adk.tools.function_tool", "FunctionTool", "_require_confirmation", "attribute"),
)


def invocation_of(ctx: ReadonlyContext) -> InvocationContext:
    """The invocation behind a callback or tool context (its plugins, its agent)."""
    invocation: InvocationContext = ctx._invocation_context
    return invocation


def disable_invocation_cache(toolset: BaseToolset) -> None:
    """Makes ADK ask `toolset.get_tools` at every model step, not once per invocation:
    what a gated toolset shows changes within an invocation."""
    toolset._use_invocation_cache = False


def declaration_of(tool: BaseTool) -> types.FunctionDeclaration | None:
    """The declaration ADK would send the model for `tool`."""
    return tool._get_declaration()


def function_tool_context_param(tool: FunctionTool) -> str:
    """The parameter through which ADK passes the `ToolContext` to a function tool."""
    name: str = tool._context_param_name
    return name


def function_tool_confirmation(tool: FunctionTool) -> Any:
    """What a function tool was built with as `require_confirmation`."""
    return tool._require_confirmation


class HookedFunctionTool(FunctionTool):
    """A `FunctionTool` whose argument preprocessing and declaration are ours.

    ADK documents `_preprocess_args` as the hook for subclasses; overriding it keeps
    ADK's own invocation path (context injection, confirmation, generators).
    """

    def preprocess_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        return args

    def declaration(self) -> types.FunctionDeclaration | None:
        return super()._get_declaration()

    @override
    def _preprocess_args(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.preprocess_arguments(args)

    @override
    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return self.declaration()
