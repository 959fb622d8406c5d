"""``yuxi+sqlite://`` and ``yuxi+postgresql://`` (``yuxi+postgres://``) for ADK's CLIs.

ADK hands a registered factory the full URI string, e.g.
``yuxi+sqlite:///data/app.db`` (relative to the working directory) or
``yuxi+sqlite:////srv/app.db`` (absolute), plus keyword arguments such as
``agents_dir``. The three factories share one store per URI, so pointing
``--session_service_uri``, ``--memory_service_uri`` and ``--artifact_service_uri``
at the same URI gives one engine. Query options: ``blob_dir``,
``max_artifact_bytes``, ``busy_timeout_ms`` and (PostgreSQL) ``schema``.
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Any

from google.adk.cli.service_registry import get_service_registry

from .._sql.store import SqlStore
from ..artifacts import SqlArtifactService
from ..memory import SqlMemoryService
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
    return SqlMemoryService(_store_for(uri))


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
