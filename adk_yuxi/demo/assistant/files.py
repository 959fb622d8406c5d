"""A demo tool that writes a generated text file as an artifact of the session.

It shows the artifact service doing something in the shipped agent: the file appears in
`adk web`'s Artifacts tab and as a row in the SQL services. Names are plain ASCII file
names (no paths), checked before anything is written.
"""

from __future__ import annotations

import mimetypes
from typing import Annotated, Any

from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import Field

from adk_yuxi.tools import tool

FILE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
MAX_TEXT_CHARS = 100_000


@tool(category="demo", tags=["files", "artifacts"], display_name="Save a text file")
async def save_text_file(
    filename: Annotated[str, Field(pattern=FILE_NAME_PATTERN)],
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)],
    tool_context: ToolContext,
) -> dict[str, Any]:
    """Saves `text` as a file named `filename` in this conversation's artifacts."""
    mime_type = mimetypes.guess_type(filename)[0] or "text/plain"
    if not mime_type.startswith("text/") and mime_type != "application/json":
        mime_type = "text/plain"
    part = types.Part(inline_data=types.Blob(data=text.encode(), mime_type=mime_type))
    version = await tool_context.save_artifact(filename, part)
    return {
        "saved": filename,
        "version": version,
        "mime_type": mime_type,
        "bytes": len(text.encode()),
    }
