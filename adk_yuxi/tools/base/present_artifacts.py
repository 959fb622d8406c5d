"""`present_artifacts`: a base tool that hands files of the user's workspace to the user.

The model names files by absolute virtual paths under `VIRTUAL_ROOT`; each maps into
the user's workspace root (given to the App). Every path is checked before anything is
saved: no ``..``, ``.`` or empty segment, no internal (dot) file or directory, no
symlink that resolves outside the root, no control (category Cc) or bidirectional
formatting character, only regular files with one link (a hard link may name a file
outside the workspace), within the size limits. One bad path and nothing is saved.
The files go through the artifact service, always session-scoped (a name ADK would
read as user-scoped, ``user:…``, is saved under `_SAFE_PREFIX`, its card keeping the
name), so each gets a new version and the event records it in ``artifact_delta`` (what `adk web`
lists in its Artifacts tab).
"""

from __future__ import annotations

import logging
import mimetypes
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import Field

from ...errors import ToolErrorCode, tool_error
from ...ledger import UnsafeUserId, ledger_plugin_of
from .._metadata import VIRTUAL_ROOT, ToolExtraMetadata
from .._safe_file import Check, SafeFileError, read_regular_file

__all__ = ["MAX_FILES", "MAX_FILE_BYTES", "METADATA", "VIRTUAL_ROOT", "present_artifacts"]

MAX_FILES = 20
MAX_FILE_BYTES = 25 * 1024 * 1024
NAME = "present_artifacts"
# ADK's artifact services treat a name starting with this as the user's, shared by
# every session (artifacts/*_artifact_service.py: `filename.startswith("user:")`).
_ADK_USER_SCOPE = "user:"
_SAFE_PREFIX = ".workspace/"
"""Where a file whose name ADK would read as user-scoped is saved, in the session: no
workspace file can have this name (internal dot names are never presented)."""
# Bidirectional formatting characters (category Cf): they make a name read otherwise
# than it is stored (``evil\u202etxt.exe``). Every Cc character (C0, DEL, C1) is refused too.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
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

    @property
    def artifact_name(self) -> str:
        """The session-scoped name it is saved under (see `_SAFE_PREFIX`)."""
        return _SAFE_PREFIX + self.name if self.name.startswith(_ADK_USER_SCOPE) else self.name


def _segments(path: str) -> list[str]:
    prefix = VIRTUAL_ROOT + "/"
    if not path.startswith(prefix):
        raise _Refused(f"must be an absolute path under {VIRTUAL_ROOT}/")
    if "\\" in path:
        raise _Refused("contains a backslash")
    # Cs: a lone surrogate would reach the file system as a raw byte (surrogateescape)
    # and then fail as an artifact name, after the files before it were saved.
    if any(ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cs") for ch in path):
        raise _Refused("contains a control, surrogate or bidirectional formatting character")
    parts = path[len(prefix) :].split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise _Refused("has an empty, '.' or '..' segment")
    if any(p.startswith(".") for p in parts):
        raise _Refused("names an internal file")
    return parts


def _check_opened(root: Path) -> Check:
    """Proves from the open descriptor that the file has one link and is not internal:
    a directory swapped for a symlink between the check and the open is caught here
    (where /proc shows descriptors; elsewhere the resolved path stands)."""

    def check(info: os.stat_result, real: Path | None) -> None:
        if info.st_nlink > 1:
            # A hard link has no "real" path to check: another name of the same file
            # may lie outside the workspace (a secret linked in by another process).
            raise _Refused("has more than one hard link, so it may be a file outside the workspace")
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


METADATA = ToolExtraMetadata(
    category="base",
    tags=["files"],
    display_name="Present files",
    extra={"base_tool": True},
)
"""How the tool is catalogued where it is registered (`register_base_tools`)."""


async def present_artifacts(
    filepaths: Annotated[list[str], Field(min_length=1, max_length=MAX_FILES)],
    tool_context: ToolContext,
) -> dict[str, Any]:
    """Shows files from the user's workspace to the user, as downloadable artifacts.

    Pass absolute paths under /workspace/ of regular files you created or found there,
    e.g. ["/workspace/reports/summary.md"]. Either every file is presented or, if one
    path is not acceptable, none is. Returns a card per file: name, artifact (the name
    it is saved under), path, mime_type, size and version.
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
                f.artifact_name,
                types.Part.from_bytes(data=f.data, mime_type=f.mime_type),
                custom_metadata={"display_name": f.name},
            )
        except Exception:  # the artifact service failed mid-way: say what was saved
            logger.exception("saving artifact %r failed", f.artifact_name)
            return tool_error(ToolErrorCode.TOOL_FAILED, NAME, saved=cards)
        cards.append(
            {
                "name": f.name,
                "artifact": f.artifact_name,
                "path": f.path,
                "mime_type": f.mime_type,
                "size": len(f.data),
                "version": version,
            }
        )
    return {"artifacts": cards}
