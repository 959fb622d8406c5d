"""ocr_parse_file: a workspace file (PDF, Office, HTML, text, image) to Markdown, through
the one document converter (`adk_yuxi.documents`), with OCR for images and scans.

The path passes the run's resource guard (relative, inside the user's workspace after
symlinks are resolved; no workspace means no file), is checked again where it is opened
(the opened descriptor must still be inside the workspace), and the file is read under a
size cap. Offered only where the OCR engine and its shipped models are installed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from pydantic import Field

from ...documents import (
    DEFAULT_MAX_BYTES,
    CorruptDocumentError,
    DocumentError,
    DocumentTooLargeError,
    OcrNotAvailableError,
    PasswordProtectedDocumentError,
    TooManyPagesError,
    aconvert_document,
    ocr_unavailable_reason,
)
from .._availability import ToolSettings, ToolUnavailable
from .._metadata import ResourceType, ToolExtraMetadata, workspace_relative
from .._registry import register_tool
from .._run_access import ResourceDenied, check_resource, run_workspace
from .._safe_file import FileTooLarge, NotARegularFile, OutsideRoot, read_regular_file
from .._strict import StrictFunctionTool

__all__ = ["MAX_CHARS", "bind_ocr_parse_file", "ocr_parse_file"]

MAX_CHARS = 20_000
_CODES: list[tuple[type[DocumentError], str]] = [
    (PasswordProtectedDocumentError, "password_protected"),
    (CorruptDocumentError, "corrupt_document"),
    (DocumentTooLargeError, "too_large"),
    (TooManyPagesError, "too_many_pages"),
    (OcrNotAvailableError, "ocr_not_available"),
]


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "tool": "ocr_parse_file", "message": message}}


def _read_inside(workspace: Path, relative: str, max_bytes: int) -> bytes:
    """The guard checked the path; the shared reader proves it again on the open
    descriptor (a regular file, still inside the workspace) and never blocks on a FIFO."""
    target = (workspace / PurePosixPath(relative.replace("\\", "/"))).resolve(strict=True)
    if not target.is_relative_to(workspace):
        raise OutsideRoot()
    try:
        return read_regular_file(target, root=workspace, max_bytes=max_bytes)
    except FileTooLarge as exc:
        raise DocumentTooLargeError(relative, exc.size, max_bytes) from None


async def ocr_parse_file(
    path: Annotated[str, Field(min_length=1, max_length=1024)],
    tool_context: ToolContext,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> dict[str, Any]:
    """Converts a file in the user's workspace (PDF, Word, PowerPoint, Excel, HTML, text
    or an image) to Markdown; images and scanned pages are read by OCR (Chinese and
    English). `path` is relative to the workspace or absolute under /workspace/. Long
    results come in parts: when `truncated` is true, call again with `offset` set to the
    returned `next_offset`."""
    # A refusal propagates: the runtime answers `resource_not_available` for it.
    await check_resource(tool_context, "path", path)
    workspace = run_workspace(tool_context)
    if workspace is None:
        raise ResourceDenied("path", ResourceType.PATH, "no workspace")
    relative = workspace_relative(path)
    try:
        data = await asyncio.to_thread(_read_inside, workspace, relative, DEFAULT_MAX_BYTES)
        document = await aconvert_document(data, name=PurePosixPath(relative).name)
    except FileNotFoundError:
        return _error("file_not_found", "No file exists at this path in the workspace.")
    except (NotARegularFile, IsADirectoryError, NotADirectoryError):
        return _error("not_a_file", "This path is not a regular file.")
    except (OutsideRoot, PermissionError):
        raise ResourceDenied("path", ResourceType.PATH, "escaped at open") from None
    except OSError as exc:
        return _error("unreadable", f"The file could not be read ({type(exc).__name__}).")
    except DocumentError as exc:
        code = next((c for kind, c in _CODES if isinstance(exc, kind)), "unsupported_document")
        return _error(code, f"The file could not be converted: {exc.reason}.")
    total = len(document.markdown)
    start = min(offset, total)
    end = min(start + MAX_CHARS, total)
    result: dict[str, Any] = {
        "path": path,
        "title": document.title,
        "mime_type": document.mime_type,
        "converter": document.converter,
        "pages": len(document.pages),
        "content": document.markdown[start:end],
        "truncated": end < total,
        "offset": start,
        "total_chars": total,
    }
    if end < total:
        result["content"] += (
            f"\n\n[… truncated: {total - end} more characters; call ocr_parse_file again"
            f" with offset={end} to read on]"
        )
        result["next_offset"] = end
    return result


def bind_ocr_parse_file(settings: ToolSettings) -> BaseTool:
    """Available where the OCR engine and its shipped models are installed."""
    reason = ocr_unavailable_reason()
    if reason is not None:
        raise ToolUnavailable("ocr_parse_file", reason)
    return _TOOL


_TOOL = StrictFunctionTool(ocr_parse_file)
register_tool(
    _TOOL,
    ToolExtraMetadata(display_name="Read a document", category="builtin", tags=["documents"]),
    binder=bind_ocr_parse_file,
)
