"""`read_tool_result`: a base tool that reads on in a tool result kept out of the prompt.

A tool result too large for the conversation is saved as an artifact of the session
(the runtime's offload plugin, `adk_yuxi.runtime`) and the model gets its head and a
reference. This tool reads a window of that stored text by reference, offset and
length (in characters). It reads through the tool context's artifact service, which
is scoped to the run's app, user and session: a reference from another session or
another user is simply not there, and the answer is the same ``resource_not_available``
either way. Only names the offload plugin makes are accepted (`is_stored_result_name`):
no ``user:`` name, no path, nothing else of the session.
"""

from __future__ import annotations

import logging
import re
from typing import Annotated, Any

from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import Field, StringConstraints

from ...errors import ToolErrorCode, tool_error
from .._metadata import ToolExtraMetadata

__all__ = [
    "DEFAULT_READ_CHARS",
    "MAX_READ_CHARS",
    "METADATA",
    "STORED_RESULT_PREFIX",
    "is_stored_result_name",
    "read_tool_result",
    "stored_text",
]

NAME = "read_tool_result"
STORED_RESULT_PREFIX = "tool-results/"
"""Where stored tool results live among the session's artifacts."""
DEFAULT_READ_CHARS = 4_000
MAX_READ_CHARS = 8_000
"""The most one call returns: about 2,000 tokens of English, well under the offload
threshold, so reading on never floods the prompt it was meant to spare."""
_NAME = re.compile(r"tool-results/[A-Za-z0-9_-]{1,80}\.(?:txt|json)")
logger = logging.getLogger("adk_yuxi.tools.read_tool_result")


def is_stored_result_name(name: str) -> bool:
    """Whether `name` has the shape of a stored tool result's artifact name."""
    return _NAME.fullmatch(name) is not None


def stored_text(part: types.Part) -> str:
    """The text of a stored result as saved (UTF-8 bytes, or a text part)."""
    if part.inline_data is not None and part.inline_data.data is not None:
        return part.inline_data.data.decode("utf-8", errors="replace")
    return part.text or ""


def _problem(field: str, problem: str) -> dict[str, Any]:
    return tool_error(
        ToolErrorCode.INVALID_ARGUMENTS, NAME, problems=[{"field": field, "problem": problem}]
    )


METADATA = ToolExtraMetadata(
    category="base",
    tags=["files"],
    display_name="Read a stored tool result",
    extra={"base_tool": True},
)
"""How the tool is catalogued where it is registered (`register_base_tools`)."""


async def read_tool_result(
    artifact: Annotated[str, StringConstraints(min_length=1, max_length=256)],
    tool_context: ToolContext,
    offset: Annotated[int, Field(ge=0, le=2**53)] = 0,
    length: Annotated[int, Field(ge=1, le=MAX_READ_CHARS)] = DEFAULT_READ_CHARS,
) -> dict[str, Any]:
    """Reads more of a tool result that was too large to show whole.

    When a tool result comes back as `stored_result` with a `preview`, pass its
    `artifact` here with `offset` (in characters; the preview ends at `next_offset`) and
    `length` (at most 8000 characters per call). Returns the `text` of that window,
    `total_chars`, and `next_offset` (null at the end).
    """
    if not is_stored_result_name(artifact):
        return _problem("artifact", "not a stored tool result (use the artifact name it gave)")
    try:
        part = await tool_context.load_artifact(artifact)
    except ValueError:  # no artifact service in this runner: nothing can be stored
        return tool_error(ToolErrorCode.TOOL_NOT_AVAILABLE, NAME)
    except Exception:  # storage down: the run goes on without it
        logger.exception("loading stored result %r failed", artifact)
        return tool_error(ToolErrorCode.TOOL_FAILED, NAME)
    if part is None:
        # Another session's or user's reference, or none at all: the same answer.
        return tool_error(ToolErrorCode.RESOURCE_NOT_AVAILABLE, NAME, argument="artifact")
    text = stored_text(part)
    total = len(text)
    if offset > total:
        return _problem("offset", f"past the end of the result ({total} characters)")
    window = text[offset : offset + length]
    end = offset + len(window)
    return {
        "artifact": artifact,
        "offset": offset,
        "total_chars": total,
        "text": window,
        "next_offset": end if end < total else None,
    }
