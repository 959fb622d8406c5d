"""Built-in tools. Each module registers its tools in the default registry at import,
and this package imports them explicitly, so importing it is what makes them exist."""

from . import calculator, documents, notes, web

BUILTIN_TOOL_IDS: tuple[str, ...] = (
    "save_note",
    "list_notes",
    "calculate",
    "web_search",
    "web_fetch",
    "ocr_parse_file",
)

__all__ = ["BUILTIN_TOOL_IDS", "calculator", "documents", "notes", "web"]
