"""Which files `yuxi kb ingest` takes from the paths it is given, and which it skips.

A folder is walked in name order. Hidden entries (a name starting with '.') and symbolic
links inside it are skipped, each with a note: a link could lead out of the folder (to a
key, a home directory) into a base other users read. A file no converter accepts is
skipped with the converters' reason. A file named on the command line is taken as given.
Two files that would get the same name in the base are refused before anything is
written, since the second would silently replace the first. A walked file is read
again without following links and only if it is still a regular file under its
folder, so swapping it for a link between the walk and the read leaks nothing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

__all__ = ["IngestPlan", "PlannedFile", "plan_ingest", "read_walked"]

_HEAD_BYTES = 8192  # enough for every format test the converters make on the bytes


@dataclass(frozen=True)
class PlannedFile:
    """A file to ingest; `folder` is the walked folder it was found in, if any."""

    path: Path
    folder: Path | None = None


@dataclass(frozen=True)
class IngestPlan:
    """The files to ingest, in order, and one note per path left out."""

    files: tuple[PlannedFile, ...]
    skipped: tuple[str, ...]


def read_walked(file: PlannedFile, max_bytes: int) -> bytes:
    """A walked file's bytes, opened without following a link at its last step and only
    while it still lies under its folder; `click.ClickException` otherwise."""
    assert file.folder is not None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(file.path, flags)
    except OSError as exc:
        raise click.ClickException(f"{file.path}: cannot open it ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        inside = Path(os.path.realpath(file.path)).is_relative_to(file.folder.resolve())
        if not stat.S_ISREG(info.st_mode) or not inside:
            raise click.ClickException(f"{file.path}: no longer a regular file in {file.folder}")
        return handle.read(max_bytes + 1)  # one byte over: the store reports the size


def _walk(folder: Path, skipped: list[str]) -> Iterator[Path]:
    for root, dirs, names in os.walk(folder, followlinks=False):
        here = Path(root)
        kept = []
        for name in sorted(dirs):
            entry = here / name
            if name.startswith("."):
                skipped.append(f"{entry}{os.sep} (hidden)")
            elif entry.is_symlink():
                skipped.append(f"{entry}{os.sep} (symbolic link, not followed)")
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            entry = here / name
            if name.startswith("."):
                skipped.append(f"{entry} (hidden)")
            elif entry.is_symlink():
                skipped.append(f"{entry} (symbolic link, not followed)")
            elif entry.is_file():
                yield entry
            else:
                skipped.append(f"{entry} (not a regular file)")


def _unsupported(path: Path) -> str | None:
    """Why no converter would take this file, judged from its first bytes and name."""
    from adk_yuxi.documents import DocumentSource, UnsupportedDocumentError, default_converters

    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    try:
        default_converters().converter_for(DocumentSource(data=head, name=path.name))
    except UnsupportedDocumentError as exc:
        return exc.reason
    return None


def plan_ingest(paths: tuple[Path, ...]) -> IngestPlan:
    """The files `paths` stand for; raises a usage error for two files of one name."""
    chosen: list[PlannedFile] = []
    skipped: list[str] = []
    for path in paths:
        if not path.is_dir():
            chosen.append(PlannedFile(path))
            continue
        for entry in _walk(path, skipped):
            reason = _unsupported(entry)
            if reason is None:
                chosen.append(PlannedFile(entry, path))
            else:
                skipped.append(f"{entry} (unsupported: {reason})")
    by_name: dict[str, list[Path]] = {}
    for file in chosen:
        by_name.setdefault(file.path.name, []).append(file.path)
    clashes = {name: found for name, found in by_name.items() if len(found) > 1}
    if clashes:
        name, found = sorted(clashes.items())[0]
        listed = ", ".join(map(str, found))
        raise click.UsageError(
            f"{len(found)} files would be named {name!r} in the base ({listed}): a file"
            " replaces the one of the same name, so ingest them into different bases or"
            " rename one. Nothing was ingested."
        )
    return IngestPlan(files=tuple(chosen), skipped=tuple(skipped))
