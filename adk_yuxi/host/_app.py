"""The ASGI app: one `ApiConfig` in, a FastAPI app out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from adk_yuxi.observability._http import HttpServerMetrics

from ..observability import RunIdOnRequest
from ._artifacts import router as artifacts_router
from ._config import ApiConfig
from ._errors import install_error_handlers
from ._host import Host
from ._keys import router as keys_router
from ._limits import BodyLimit, HeaderLimit, JsonBodies
from ._marks import router as marks_router
from ._openapi import install_openapi
from ._run_routes import router as runs_router
from ._schemas import Health
from ._sessions import router as sessions_router

__all__ = ["create_app"]


def create_app(config: ApiConfig) -> FastAPI:
    """The API of `config`; the database is opened (and migrated) at startup."""
    host = Host(config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await host.start()
        try:
            yield
        finally:
            await host.close()

    app = FastAPI(
        title="adk_yuxi host API",
        version="1",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.host = host
    install_error_handlers(app)
    app.include_router(keys_router)
    app.include_router(sessions_router)
    app.include_router(runs_router)
    app.include_router(artifacts_router)
    app.include_router(marks_router)

    @app.get("/healthz", tags=["health"], response_model=Health)
    async def health() -> Health:
        """Anonymous: the process is up."""
        return Health(status="ok")

    install_openapi(app)
    app.add_middleware(JsonBodies)  # inside BodyLimit: the body is read by then
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes)
    app.add_middleware(HeaderLimit, max_bytes=config.max_header_bytes)
    app.add_middleware(HttpServerMetrics)  # outermost: every request, refused ones too
    # FastAPI makes each request's server span (route template, status, the caller's
    # traceparent); this adds the run the request started or followed.
    app.add_middleware(RunIdOnRequest)
    return app
