"""The knowledge server in a background thread of this process.

For single-process setups (`adk run`, `adk web`, a notebook) where nothing else runs the
built-in server: it gets its own event loop and database connections, listens on a
loopback port, and is reached over real streamable HTTP like a separate service.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

from ..access import AccessRepository
from ._delegation import DelegationVerifier
from ._embedding import Embedder
from ._server import build_knowledge_server, serve_knowledge_http
from ._service import KnowledgeService
from ._store import KnowledgeStore

__all__ = ["KnowledgeServerThread"]


class KnowledgeServerThread:
    def __init__(
        self,
        db: str,
        verifier: DelegationVerifier,
        *,
        setup: Callable[[KnowledgeStore], Awaitable[None]] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        embedder: Embedder | None = None,
    ) -> None:
        self._db = db
        self._embedder = embedder
        self._verifier = verifier
        self._setup = setup
        self._host = host
        self._port = port
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name="yuxi-knowledge", daemon=True)

    def start(self, timeout: float = 60.0) -> str:
        """Starts the server (running ``setup`` first) and returns its URL."""
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("the knowledge server did not start in time")
        if self._error is not None:
            raise RuntimeError(f"the knowledge server failed to start: {self._error}")
        return self._url

    @property
    def url(self) -> str:
        return self._url

    def stop(self, timeout: float = 30.0) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported to start(); the thread then ends
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        store = KnowledgeStore(self._db, embedder=self._embedder)
        try:
            await store.prepare()
            if self._setup is not None:
                await self._setup(store)
            service = KnowledgeService(store, AccessRepository(store.store), self._verifier)
            server = build_knowledge_server(service)
            async with serve_knowledge_http(server, host=self._host, port=self._port) as url:
                self._url = url
                self._ready.set()
                await self._stop.wait()
        finally:
            await store.close()
