"""`present_artifacts`: a base tool that hands files of the user's workspace to the user.

The model names files by absolute virtual paths under `VIRTUAL_ROOT`; each maps into
the user's workspace root (given to the App). Every path is checked before anything is
saved: no ``..``, ``.`` or empty segment, no internal (dot) file or directory, no
symlink that resolves outside the root, only regular files, within the size limits.
One bad path and nothing is saved. The files then go through the artifact service, so
each gets a new version and the event records it in ``artifact_delta`` (what `adk web`
lists in its Artifacts tab).
"""

from __future__ import annotations

import logging
import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import Field

from ...errors import ToolErrorCode, tool_error
from ...ledger import UnsafeUserId, ledger_plugin_of
from .._metadata import VIRTUAL_ROOT
from .._registry import tool
from .._safe_file import Check, SafeFileError, read_regular_file

__all__ = ["MAX_FILES", "MAX_FILE_BYTES", "VIRTUAL_ROOT", "present_artifacts"]

MAX_FILES = 20
MAX_FILE_BYTES = 25 * 1024 * 1024
NAME = "present_artifacts"
logger = logging.getLogger("adk_yuxi.tools.present")


class _Refused(Exception):
    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


@dataclass(frozen=True)
class _File:
    path: str
    name: str
    data: bytes
    mime_type: str


def _segments(path: str) -> list[str]:
    prefix = VIRTUAL_ROOT + "/"
    if not path.startswith(prefix):
        raise _Refused(f"must be an absolute path under {VIRTUAL_ROOT}/")
    if "\\" in path or any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise _Refused("contains a backslash or a control character")
    parts = path[len(prefix) :].split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise _Refused("has an empty, '.' or '..' segment")
    if any(p.startswith(".") for p in parts):
        raise _Refused("names an internal file")
    return parts


def _check_opened(root: Path) -> Check:
    """Proves from the open descriptor that the file is not internal: a directory
    swapped for a symlink between the check and the open is caught here (where /proc
    shows descriptors; elsewhere the resolved path stands)."""

    def check(info: os.stat_result, real: Path | None) -> None:
        if real is not None and any(p.startswith(".") for p in real.relative_to(root).parts):
            raise _Refused("is not a file in the workspace")

    return check


def _read(root: Path, path: str) -> _File:
    parts = _segments(path)
    try:
        resolved = root.joinpath(*parts).resolve(strict=True)
    except (OSError, RuntimeError):
        raise _Refused("is not a file in the workspace") from None
    if not resolved.is_relative_to(root) or resolved == root:
        raise _Refused("is not a file in the workspace")
    if any(p.startswith(".") for p in resolved.relative_to(root).parts):
        raise _Refused("names an internal file")
    try:
        data = read_regular_file(
            resolved, root=root, max_bytes=MAX_FILE_BYTES, check=_check_opened(root)
        )
    except SafeFileError as refused:
        raise _Refused(str(refused)) from None
    except OSError:
        raise _Refused("is not a file in the workspace") from None
    name = "/".join(parts)
    mime_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return _File(path=path, name=name, data=data, mime_type=mime_type)


@tool(
    category="base",
    tags=["files"],
    display_name="Present files",
    extra={"base_tool": True},
)
async def present_artifacts(
    filepaths: Annotated[list[str], Field(min_length=1, max_length=MAX_FILES)],
    tool_context: ToolContext,
) -> dict[str, Any]:
    """Shows files from the user's workspace to the user, as downloadable artifacts.

    Pass absolute paths under /workspace/ of regular files you created or found there,
    e.g. ["/workspace/reports/summary.md"]. Either every file is presented or, if one
    path is not acceptable, none is. Returns a card per file: name, path, mime_type,
    size and version.
    """
    plugin = ledger_plugin_of(tool_context)
    try:
        root = None if plugin is None else plugin.workspace_of(tool_context.session.user_id)
    except UnsafeUserId:
        root = None
    if root is None:
        return tool_error(ToolErrorCode.TOOL_NOT_AVAILABLE, NAME)
    if len(set(filepaths)) != len(filepaths):
        return tool_error(
            ToolErrorCode.RESOURCE_NOT_AVAILABLE, NAME, problems=[{"problem": "a path is repeated"}]
        )
    files: list[_File] = []
    problems: list[dict[str, str]] = []
    for path in filepaths:
        try:
            files.append(_read(root, path))
        except _Refused as refused:
            problems.append({"path": path, "problem": refused.problem})
    if problems:
        return tool_error(ToolErrorCode.RESOURCE_NOT_AVAILABLE, NAME, problems=problems)
    cards: list[dict[str, Any]] = []
    for f in files:
        try:
            version = await tool_context.save_artifact(
                f.name, types.Part.from_bytes(data=f.data, mime_type=f.mime_type)
            )
        except Exception:  # the artifact service failed mid-way: say what was saved
            logger.exception("saving artifact %r failed", f.name)
            return tool_error(ToolErrorCode.TOOL_FAILED, NAME, saved=cards)
        cards.append(
            {
                "name": f.name,
                "path": f.path,
                "mime_type": f.mime_type,
                "size": len(f.data),
                "version": version,
            }
        )
    return {"artifacts": cards}
