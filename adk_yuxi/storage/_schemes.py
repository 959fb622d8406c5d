"""``yuxi+sqlite://`` and ``yuxi+postgresql://`` (``yuxi+postgres://``) for ADK's CLIs.

ADK hands a registered factory the full URI string, e.g.
``yuxi+sqlite:///data/app.db`` (relative to the working directory) or
``yuxi+sqlite:////srv/app.db`` (absolute), plus keyword arguments such as
``agents_dir``. The three factories share one store per URI, so pointing
``--session_service_uri``, ``--memory_service_uri`` and ``--artifact_service_uri``
at the same URI gives one engine. Query options: ``blob_dir``,
``max_artifact_bytes``, ``busy_timeout_ms`` and (PostgreSQL) ``schema``.
``YUXI_MEMORY_EMBEDDINGS=1`` gives the memory service embeddings, as it does for
``yuxi serve api``.
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
from typing import Any

from google.adk.cli.service_registry import get_service_registry

from .._sql.store import SqlStore
from ..artifacts import SqlArtifactService
from ..memory import MemoryConfigError, SqlMemoryService, memory_embedder_from_env
from ..sessions import SqlSessionService

SCHEMES = ("yuxi+sqlite", "yuxi+postgresql", "yuxi+postgres")

_log = logging.getLogger(__name__)
_stores: dict[str, SqlStore] = {}
_lock = threading.Lock()


def _store_for(uri: str) -> SqlStore:
    with _lock:
        store = _stores.get(uri)
        if store is None:
            store = _stores[uri] = SqlStore(uri)
            _log.info("adk_yuxi SQL services on %s", store.description)
        return store


@atexit.register
def _close_stores() -> None:
    """ADK's CLIs never close their services; close ours so SQLite leaves no WAL."""
    with _lock:
        stores = list(_stores.values())
        _stores.clear()
    for store in stores:
        store.close_now()


def _session_factory(uri: str, **_: Any) -> SqlSessionService:
    return SqlSessionService(_store_for(uri))


def _memory_factory(uri: str, **_: Any) -> SqlMemoryService:
    try:
        embedder = memory_embedder_from_env()  # the same switch as `yuxi serve api`'s
    except MemoryConfigError as error:
        # ADK's CLIs print a traceback for whatever a factory raises; say it first.
        print(f"[adk_yuxi] {error}", file=sys.stderr, flush=True)
        raise
    if embedder is not None:
        _log.info("adk_yuxi memory search: full text and embeddings (%s)", embedder.name)
    return SqlMemoryService(_store_for(uri), embedder=embedder)


def _artifact_factory(uri: str, **_: Any) -> SqlArtifactService:
    return SqlArtifactService(_store_for(uri))


def register_service_schemes() -> None:
    """Registers the platform's URI schemes with ADK's service registry.

    Safe to call any number of times. Call it from ``services.py`` in the agents
    directory (``adk web``) or the agent folder (``adk run``): ADK imports that
    module before it builds its services, while an agent module is too late.
    """
    registry = get_service_registry()
    for scheme in SCHEMES:
        registry.register_session_service(scheme, _session_factory)
        registry.register_memory_service(scheme, _memory_factory)
        registry.register_artifact_service(scheme, _artifact_factory)
