"""Every ADK private name we use (`adk_yuxi._adk.PINNED`) exists in the installed ADK.

An ADK upgrade that renames or removes one fails here, naming it, instead of somewhere
deep in a run."""

from __future__ import annotations

import importlib
import inspect

import pytest
from google.adk.agents.readonly_context import ReadonlyContext
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
    raise AssertionError(f"no sample instance for {cls}")


@pytest.mark.parametrize(("module", "cls", "name", "kind"), _adk.PINNED)
def test_pinned_private_name_exists(module: str, cls: str, name: str, kind: str) -> None:
    owner = getattr(importlib.import_module(module), cls)
    if kind == "method":
        assert callable(inspect.getattr_static(owner, name)), f"{cls}.{name} is gone"
    else:
        assert hasattr(_instance(owner), name), f"{cls} instances no longer have {name}"


def test_only_the_adk_module_touches_private_names() -> None:
    """The other modules of the package reach ADK internals only through `_adk`."""
    import pathlib

    root = pathlib.Path(_adk.__file__).parent
    names = {name for _, _, name, _ in _adk.PINNED}
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "_adk.py":
            continue
        text = path.read_text()
        offenders += [f"{path.relative_to(root)}: {n}" for n in names if f".{n}" in text]
    assert offenders == []
