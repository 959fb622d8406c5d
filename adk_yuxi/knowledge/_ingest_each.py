"""Several files into one base, one transaction each, reported as each is done.

A file that cannot be ingested (unreadable, unsupported, too large, a zip bomb) is an
outcome like any other: the files before it stay committed and reported, and the ones
after it are still tried unless the caller asked to stop at the first failure.
Cancellation is not an outcome: it ends the walk, and the file being ingested keeps its
previous version (its transaction rolls back).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..documents import DocumentError
from ._errors import KnowledgeError
from ._models import KnowledgeFile
from ._progress import IngestProgress

if TYPE_CHECKING:  # the store needs the knowledge extra; this module must not
    from ._store import KnowledgeStore

__all__ = ["IngestOutcome", "ingest_each"]


@dataclass(frozen=True)
class IngestOutcome:
    """One file's result: the stored file, or why it was not stored."""

    path: str
    file: KnowledgeFile | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.file is not None


async def ingest_each(
    store: KnowledgeStore,
    kb_id: str,
    paths: Iterable[str | os.PathLike[str]],
    *,
    keep_going: bool = True,
    progress_for: Callable[[str], IngestProgress | None] | None = None,
    read: Callable[[Path], Awaitable[Path | bytes]] | None = None,
) -> AsyncIterator[IngestOutcome]:
    """Yields an `IngestOutcome` per file as soon as its transaction has committed (or
    failed); with ``keep_going=False`` the walk stops after the first failure. `read`
    gives what to ingest for a path (its bytes, read the caller's way); by default the
    store opens the path itself."""
    for path in paths:
        label = str(path)
        name = Path(label).name
        progress = progress_for(name) if progress_for else None
        try:
            source = path if read is None else await read(Path(path))
            stored = await store.ingest(kb_id, source, name=name, progress=progress)
        except (DocumentError, KnowledgeError, OSError, ValueError) as exc:
            yield IngestOutcome(label, error=str(exc) or type(exc).__name__)
            if not keep_going:
                return
            continue
        yield IngestOutcome(label, file=stored)
