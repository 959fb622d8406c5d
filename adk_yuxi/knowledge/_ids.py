"""Checks for the ids and names that reach the store from tools and the CLI."""

from __future__ import annotations

import re
import unicodedata

from ._errors import InvalidKnowledgeRequestError, shown

__all__ = ["check_file_name", "check_ident", "check_kb_name"]

# Ids are ours (generated) or operator-chosen slugs: plain ASCII, so a look-alike
# (Cyrillic "а" for "a", full-width digits) or a stray space never names a real one.
_IDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def check_ident(value: object, what: str) -> str:
    if not isinstance(value, str) or not _IDENT.fullmatch(value):
        raise InvalidKnowledgeRequestError(
            f"{what} must be 1-128 ASCII letters, digits, '_', '.' or '-', got {shown(value)}"
        )
    return value


def _check_text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidKnowledgeRequestError(f"{what} must be a string")
    text = unicodedata.normalize("NFC", value).strip()
    if not text or len(text) > limit:
        raise InvalidKnowledgeRequestError(f"{what} must be 1-{limit} characters")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in text):
        raise InvalidKnowledgeRequestError(f"{what} must not contain control characters")
    return text


def check_kb_name(value: object) -> str:
    return _check_text(value, "a knowledge base name", 200)


def check_file_name(value: object) -> str:
    name = _check_text(value, "a file name", 255)
    if "/" in name or "\\" in name or name in (".", ".."):
        raise InvalidKnowledgeRequestError("a file name must not contain path separators")
    return name
