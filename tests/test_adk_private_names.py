"""Every ADK private name we use (`adk_yuxi._adk.PINNED`) exists in the installed ADK.

An ADK upgrade that renames or removes one fails here, naming it, instead of somewhere
deep in a run."""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.sessions.session import Session
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool

from adk_yuxi import _adk


def _sample(x: int) -> int:
    """A function for a sample tool."""
    return x


class _Toolset(BaseToolset):
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list:  # type: ignore[override, type-arg]
        return []


def _instance(cls: type) -> object:
    if issubclass(cls, FunctionTool):
        return FunctionTool(_sample)
    if issubclass(cls, BaseToolset):
        return _Toolset()
    if issubclass(cls, ReadonlyContext):
        return ReadonlyContext(invocation_context=object())  # type: ignore[arg-type]
    if issubclass(cls, Session):
        return Session(id="s", app_name="a", user_id="u")
    raise AssertionError(f"no sample instance for {cls}")


@pytest.mark.parametrize(("module", "cls", "name", "kind"), _adk.PINNED)
def test_pinned_private_name_exists(module: str, cls: str, name: str, kind: str) -> None:
    owner = getattr(importlib.import_module(module), cls)
    if kind == "method":
        assert callable(getattr(owner, name, None)), f"{cls}.{name} is gone"
    else:
        assert hasattr(_instance(owner), name), f"{cls} instances no longer have {name}"


@pytest.mark.parametrize(("module", "name"), _adk.PINNED_MODULES)
def test_pinned_private_module_exists(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name), f"{module}.{name} is gone"


@pytest.mark.parametrize(("module", "name"), _adk.PINNED_FUNCTIONS)
def test_pinned_private_function_exists(module: str, name: str) -> None:
    assert callable(getattr(importlib.import_module(module), name, None)), f"{name} is gone"


def _private_google_module(node: ast.AST) -> str | None:
    if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("google."):
        return None
    module = node.module or ""
    return module if any(part.startswith("_") for part in module.split(".")) else None


def test_only_the_adk_module_touches_private_names() -> None:
    """The other modules of the package reach ADK internals only through `_adk`: no
    attribute access to a pinned name, no method overriding one."""
    root = pathlib.Path(_adk.__file__).parent
    names = {name for _, _, name, _ in _adk.PINNED} | {n for _, n in _adk.PINNED_FUNCTIONS}
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "_adk.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            touched = None
            if isinstance(node, ast.Attribute) and node.attr in names:
                touched = node.attr
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names:
                touched = node.name
            else:
                touched = _private_google_module(node)
            if touched is not None:
                offenders.append(f"{path.relative_to(root)}:{node.lineno}: {touched}")
    assert offenders == []


def test_the_a2a_agent_module_is_marked_unavailable_only_without_a2a() -> None:
    import importlib.util
    import sys

    assert importlib.util.find_spec("google.adk.agents") is not None
    path = pathlib.Path(importlib.util.find_spec("google.adk.agents").origin or "").parent  # type: ignore[union-attr]
    assert (path / (_adk.A2A_AGENT_MODULE.rsplit(".", 1)[1] + ".py")).is_file(), (
        f"{_adk.A2A_AGENT_MODULE} is gone from ADK"
    )
    if importlib.util.find_spec("a2a") is not None:
        pytest.skip("the a2a package is installed here: nothing to mark")
    assert _adk.mark_a2a_agent_unavailable() is True
    assert sys.modules[_adk.A2A_AGENT_MODULE] is None
    with pytest.raises(ImportError):
        importlib.import_module(_adk.A2A_AGENT_MODULE)
    assert _adk.mark_a2a_agent_unavailable() is True  # idempotent
