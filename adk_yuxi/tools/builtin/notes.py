"""Notes kept in the user's session state: the smallest tool that shows state persisting.

Notes live under the `user:` prefix, so every session of the same user in the same app
sees them, and they survive restarts whenever the session service is persistent.
"""

from __future__ import annotations

from typing import Annotated, Any

from google.adk.tools.tool_context import ToolContext
from pydantic import Field

from .._registry import tool

NOTES_KEY = "user:notes"
MAX_NOTES = 200


@tool(category="builtin", tags=["notes", "memory"], display_name="Save a note")
def save_note(
    text: Annotated[str, Field(min_length=1, max_length=2000)],
    tool_context: ToolContext,
) -> dict[str, Any]:
    """Saves a short note for this user so it can be recalled in later conversations."""
    cleaned = text.strip()
    if not cleaned:
        return {"error": {"code": "invalid_arguments", "message": "the note is empty"}}
    notes = list(tool_context.state.get(NOTES_KEY) or [])
    if len(notes) >= MAX_NOTES:
        return {
            "error": {
                "code": "limit_reached",
                "message": f"this user already has {MAX_NOTES} notes; nothing was saved",
            }
        }
    notes.append(cleaned)
    tool_context.state[NOTES_KEY] = notes
    return {"saved": True, "note_number": len(notes)}


@tool(category="builtin", tags=["notes", "memory"], display_name="List notes")
def list_notes(tool_context: ToolContext) -> dict[str, Any]:
    """Lists the notes this user saved earlier, oldest first."""
    notes = list(tool_context.state.get(NOTES_KEY) or [])
    return {"count": len(notes), "notes": notes}
