"""Imports a user's modules or agent folders so their tools register before listing."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

__all__ = ["import_agent_folder", "import_module"]


def _on_path(directory: Path) -> None:
    entry = str(directory.resolve())
    if entry not in sys.path:
        sys.path.insert(0, entry)


def import_module(name: str) -> None:
    """Imports `name` (dotted, or a path to a .py file) with the working directory on
    the path, as `python -c "import name"` run here would."""
    _on_path(Path.cwd())
    target = name
    path = Path(name)
    if path.suffix == ".py":
        if not path.is_file():
            raise click.BadParameter(f"{name}: no such file", param_hint="--import")
        _on_path(path.parent)
        target = path.stem
    try:
        importlib.import_module(target)
    except ImportError as exc:
        raise click.BadParameter(
            f"cannot import {name!r}: {exc}. Give a dotted module name importable from the"
            " working directory (e.g. 'mytools' or 'pkg.tools') or a path to a .py file.",
            param_hint="--import",
        ) from exc


def import_agent_folder(folder: Path) -> None:
    """Imports an agent folder the way `adk run FOLDER` does: as a package named after
    the folder, with its parent directory on the path."""
    folder = folder.resolve()
    if not (folder / "__init__.py").is_file() and not (folder / "agent.py").is_file():
        raise click.BadParameter(
            f"{folder} is not an agent folder (no __init__.py or agent.py)",
            param_hint="--agent",
        )
    _on_path(folder.parent)
    module = folder.name if (folder / "__init__.py").is_file() else f"{folder.name}.agent"
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise click.BadParameter(f"cannot import {folder}: {exc}", param_hint="--agent") from exc
