"""The package's import graph has no circles, counting imports made inside functions, and
every module imports alone: a circle makes the import order decide what works, and a
module that needs another imported first breaks the first user who imports it alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import adk_yuxi

ROOT = Path(adk_yuxi.__file__).parent
PACKAGE = "adk_yuxi"

# Packages below the runtime: none of them may import it (the runtime assembles them).
BELOW_RUNTIME = (
    "access",
    "artifacts",
    "guards",
    "ledger",
    "marks",
    "mcp",
    "memory",
    "models",
    "sessions",
    "skills",
    "storage",
    "tools",
    "waitpoints",
    "web",
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base.pop()
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _typing_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test).endswith(
        "TYPE_CHECKING"
    )


def _executed(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node that can run: all of them but the bodies of `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if _typing_only(child):
                assert isinstance(child, ast.If)
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """Every module of ours `name` imports, at module level or inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    for node in _executed(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node)
            # `from pkg import mod` imports the submodule; `from pkg import name` the package.
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith(PACKAGE) and target != name:
                yield target


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    edges = {name: set(_imports(name, path, known)) for name, path in found.items()}
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_resolve() -> None:
    node = ast.parse("from ..tools import base").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert _resolve("adk_yuxi.runtime._app", False, node) == "adk_yuxi.tools"
    assert _resolve("adk_yuxi.runtime", True, node) == "adk_yuxi.tools"


def test_no_import_circles() -> None:
    found = circles(graph())
    assert found == [], f"{len(found)} import circle(s): {found}"


def test_nothing_below_the_runtime_imports_it() -> None:
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if name.split(".")[1:2]
        and name.split(".")[1] in BELOW_RUNTIME
        and target.startswith(f"{PACKAGE}.runtime")
    )
    assert upward == []


_ALONE = """
import importlib, sys, traceback
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "adk_yuxi" or m.startswith("adk_yuxi.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc(limit=3))
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


@pytest.mark.parametrize("part", range(2))
def test_every_module_imports_alone(part: int) -> None:
    """Each module in a clean `sys.modules` (of ours: third-party modules stay loaded,
    which keeps the batch fast and changes nothing about our own import order)."""
    names = sorted(modules())
    batch = names[part::2]
    done = subprocess.run(
        [sys.executable, "-c", _ALONE, *batch],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
