"""One way to read a workspace file a tool was pointed at, shared by every tool that
reads one: the type is judged on the open descriptor, never on the path.

Opening is non-blocking (a FIFO named `report.pdf` would otherwise wait for a writer and
hold a worker thread), does not follow a final symlink, and the descriptor is checked
with `fstat` and, where /proc shows it, by the path it really points at: anything but a
regular file inside the root is refused before a byte is read, and the read stops one
byte past the cap.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import YuxiError

__all__ = [
    "FileTooLarge",
    "NotARegularFile",
    "OutsideRoot",
    "SafeFileError",
    "read_regular_file",
]

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class SafeFileError(YuxiError):
    """A file a tool may not read; the message is safe to show the model."""


class NotARegularFile(SafeFileError):
    def __init__(self) -> None:
        super().__init__("is not a regular file")


class OutsideRoot(SafeFileError):
    def __init__(self) -> None:
        super().__init__("is not a file in the workspace")


class FileTooLarge(SafeFileError):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"is larger than {limit} bytes")
        self.size = size
        self.limit = limit


Check = Callable[[os.stat_result, Path | None], None]
"""A caller's own test of the open file (its `fstat` and its real path when known);
raises to refuse it."""


def read_regular_file(
    path: Path, *, root: Path, max_bytes: int, check: Check | None = None
) -> bytes:
    """The bytes of the regular file at `path` (already resolved inside `root`).

    Raises `NotARegularFile`, `OutsideRoot` or `FileTooLarge`; an `OSError` from the open
    itself (missing file, a symlink in the final place) propagates.
    """
    fd = os.open(path, _FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile()
        real = _real_path(fd)
        if real is not None and not real.is_relative_to(root):
            raise OutsideRoot()
        if check is not None:
            check(info, real)
        if info.st_size > max_bytes:
            raise FileTooLarge(info.st_size, max_bytes)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileTooLarge(len(data), max_bytes)
    return data


def _real_path(fd: int) -> Path | None:
    """Where the descriptor really points (a directory swapped for a symlink between a
    check of the path and the open shows here), or None where /proc is missing."""
    link = f"/proc/self/fd/{fd}"
    if not os.path.exists(link):
        return None
    return Path(os.readlink(link))
