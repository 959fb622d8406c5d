"""`ToolResultOffload`: when a tool result is too large to put in the prompt.

Kept apart from `_config` so the setting and its reasons sit in one place; the field
on `AgentConfig` is `offload_tool_results`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["DEFAULT_MAX_INLINE_BYTES", "DEFAULT_PREVIEW_CHARS", "ToolResultOffload"]

DEFAULT_MAX_INLINE_BYTES = 16 * 1024
"""16 KiB of UTF-8: about 4,000 tokens of English or 5,000 of Chinese (bytes follow
tokens across scripts better than characters do). Ordinary results (a record, a list
of twenty hits, a calculation) stay far below it; a page, a file or a table dump goes
above, and one such result in every later request is what makes a long conversation
expensive."""
DEFAULT_PREVIEW_CHARS = 2_000
"""The head the model still sees: enough to tell what came back and whether to read on."""


class ToolResultOffload(BaseModel):
    """A tool result whose JSON is larger than `max_inline_bytes` (UTF-8) is saved as an
    artifact of the session; the model gets its first `preview_chars` characters, its
    size and the artifact's name, and reads on with the `read_tool_result` base tool.

    Knowledge and web tools page their own results and are never offloaded, nor are
    the tools in `exempt_tools` (by name).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_inline_bytes: int = Field(default=DEFAULT_MAX_INLINE_BYTES, ge=1024, le=1024 * 1024)
    preview_chars: int = Field(default=DEFAULT_PREVIEW_CHARS, ge=0, le=8_000)
    exempt_tools: tuple[str, ...] = ()

    @field_validator("exempt_tools", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("expected a list of tool names, not a string")
        return value
