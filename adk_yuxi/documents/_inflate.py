"""Zip-based documents (Office files) are judged by what they inflate to, not by their
size on disk: a 10 KB `.docx` can hold 10 MB of XML, and the libraries that read it
hold all of it in memory.

The members are inflated once, in 64 KB pieces, through the same `zipfile` reader the
converters' libraries use, counting the bytes that really come out: a header that
understates a member's size cannot get more past the cap than it gets past them (and
`zipfile` refuses the member when its data disagrees with the header).
"""

from __future__ import annotations

import io
import zipfile

from ._damage import is_damage
from ._errors import CorruptDocumentError, DocumentError, DocumentTooLargeError

__all__ = [
    "INFLATE_RATIO",
    "MAX_INFLATED_BYTES",
    "MAX_ZIP_MEMBERS",
    "InflatedTooLargeError",
    "check_inflated_size",
    "inflated_limit",
]

INFLATE_RATIO = 20
"""A zip document may inflate to this many times the byte limit of its file..."""
MAX_INFLATED_BYTES = 200 * 1024 * 1024
"""...and never to more than this."""
MAX_ZIP_MEMBERS = 10_000
_PIECE = 64 * 1024


def inflated_limit(max_bytes: int) -> int:
    return min(max_bytes * INFLATE_RATIO, MAX_INFLATED_BYTES)


class InflatedTooLargeError(DocumentTooLargeError):
    """A zip-based document inflates past the limit (a zip bomb, or simply too big)."""

    def __init__(self, name: str, size: int, limit: int) -> None:
        DocumentError.__init__(self, name, f"it inflates to more than {limit} bytes")
        self.size = size
        self.limit = limit


def check_inflated_size(data: bytes, name: str, limit: int) -> None:
    """Raises `DocumentTooLargeError` when the members inflate past ``limit`` bytes,
    `CorruptDocumentError` when the archive cannot be read; reads nothing past the cap."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > MAX_ZIP_MEMBERS:
                raise CorruptDocumentError(name, f"more than {MAX_ZIP_MEMBERS} zip members")
            declared = sum(m.file_size for m in members)
            if declared > limit:
                raise InflatedTooLargeError(name, declared, limit)
            total = 0
            for member in members:
                with archive.open(member) as stream:
                    while piece := stream.read(_PIECE):
                        total += len(piece)
                        if total > limit:
                            raise InflatedTooLargeError(name, total, limit)
    except Exception as exc:
        if not is_damage(exc):
            raise
        raise CorruptDocumentError(name, f"the zip container is damaged ({exc})") from None
