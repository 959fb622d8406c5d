"""A memory's content as the service stores it: its text, and its JSON form."""

from __future__ import annotations

from google.genai import types
from pydantic_core import PydanticSerializationError

from .._sql.errors import InvalidValueError

__all__ = ["content_json", "text_of"]


def text_of(content: types.Content | None) -> str:
    """The text a memory is searched by: its parts' text, thoughts left out."""
    if content is None or not content.parts:
        return ""
    return " ".join(p.text for p in content.parts if p.text and not p.thought).strip()


def content_json(content: types.Content) -> str:
    """The content as JSON (NUL escaped); refused if it holds text no backend can store."""
    try:
        return content.model_dump_json(exclude_none=True)
    except PydanticSerializationError as exc:
        raise InvalidValueError(f"Invalid memory content: {exc}") from None
