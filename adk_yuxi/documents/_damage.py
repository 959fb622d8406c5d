"""What a parser of a damaged file may raise, mapped to our own error in one place.

A truncated or altered file makes its parser fail in ways of its own: `zipfile` raises
`BadZipFile` but also `NotImplementedError` ("zip file version 6.4"), `EOFError`,
`ValueError` or `OverflowError` from a mangled header; `zlib.error` from a bad stream;
the PDF, Office and image libraries raise their own types, `KeyError`, `IndexError`,
`struct.error`, `UnicodeDecodeError`, `AssertionError`... Any `Exception` from parsing
is therefore *damage*, except our own `DocumentError` (already ours), a missing optional
package (`ModuleNotFoundError`: a deployment fault, reported as such) and exhaustion
(`MemoryError`, `RecursionError`: not the file's fault alone, never swallowed).
`reading` turns damage into `CorruptDocumentError`; sniffing uses `is_damage` to
fall back to the name instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ._errors import CorruptDocumentError, DocumentError, UnsupportedDocumentError

__all__ = ["is_damage", "reading"]

_NOT_DAMAGE = (DocumentError, ModuleNotFoundError, MemoryError, RecursionError)


def is_damage(exc: BaseException) -> bool:
    """Whether ``exc``, raised while parsing a file, says the file is damaged."""
    return isinstance(exc, Exception) and not isinstance(exc, _NOT_DAMAGE)


@contextmanager
def reading(name: str, reader: str) -> Iterator[None]:
    """Parsing by ``reader`` (a converter's name): its damage becomes
    `CorruptDocumentError`, a missing package `UnsupportedDocumentError`."""
    try:
        yield
    except ModuleNotFoundError as exc:  # its library comes with an extra not installed
        raise UnsupportedDocumentError(
            name,
            f"reading it needs the {exc.name!r} package: pip install 'adk-yuxi[documents]'",
        ) from exc
    except Exception as exc:
        if not is_damage(exc):
            raise
        raise CorruptDocumentError(
            name, f"{reader} could not read it ({type(exc).__name__}: {exc})"
        ) from exc
