"""`yuxi create NAME`: a new agent folder that `adk run NAME` and `adk web .` load at once.

The folder is written complete or not at all: the files go to a temporary folder beside
it, renamed into place in one step, so a refused name or a failed write leaves nothing.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import re
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from string import Template

import click

__all__ = ["create", "create_agent_folder"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,47}")
# Names ADK gives a meaning of its own: the user role and its two import hooks.
_RESERVED = frozenset({"user", "agent", "services"})
_FILES = ("__init__.py", "agent.py", "services.py", "README.md")


class AgentNameError(click.UsageError):
    """A name that cannot be an agent folder; the message says why and what would do."""


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise AgentNameError(
            f"{name!r} cannot name an agent: use 1-48 ASCII letters, digits and '_',"
            " starting with a letter or '_' (ADK imports the folder as a Python package)"
        )
    if keyword.iskeyword(name) or name in _RESERVED:
        raise AgentNameError(f"{name!r} is reserved (by Python or by ADK); choose another name")
    if importlib.util.find_spec(name) is not None:
        raise AgentNameError(
            f"{name!r} is already an importable module here, and `adk run` would load that"
            " one instead of the folder; choose another name"
        )


def _render(name: str) -> dict[str, str]:
    templates = resources.files("adk_yuxi.cli").joinpath("_agent_template")
    return {
        file: Template(templates.joinpath(f"{file}.tmpl").read_text("utf-8")).substitute(name=name)
        for file in _FILES
    }


def create_agent_folder(name: str, parent: Path) -> Path:
    """Writes the folder `parent/name`; raises `AgentNameError` or `click.ClickException`
    (an existing non-empty folder, a file in the way, a failed write) and then leaves
    the file system as it was."""
    _check_name(name)
    target = parent / name
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise click.ClickException(f"{target} exists and is not a folder; nothing written")
    if target.is_dir() and any(target.iterdir()):
        raise click.ClickException(f"{target} exists and is not empty; nothing written")
    files = _render(name)
    staging: Path | None = None
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=parent))
        for file, text in files.items():
            (staging / file).write_text(text, encoding="utf-8")
        staging.chmod(0o777 & ~_umask())
        # rename(2) replaces an empty folder and refuses a non-empty one (filled since
        # the check above), so nothing of the user's is overwritten.
        os.rename(staging, target)
    except OSError as exc:
        raise click.ClickException(
            f"cannot write {target}: {exc.strerror or exc}; nothing written"
        ) from None
    finally:
        if staging is not None and staging.exists():  # not renamed into place
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@click.command()
@click.argument("name")
def create(name: str) -> None:
    """Write a new agent folder NAME here: agent.py with a tool, services.py, a README.

    `adk run NAME` runs it at once, on the offline demo model until YUXI_MODEL is set.
    """
    target = create_agent_folder(name, Path.cwd())
    click.echo(f"Created {target}/ ({', '.join(_FILES)}).")
    click.echo(f"Run it:        adk run {name}")
    click.echo("In a browser:  adk web .")
    click.echo(f"Its tools:     yuxi tools --agent {name}")
