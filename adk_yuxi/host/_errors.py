"""The one JSON error shape of the API and the one place lower-layer errors are mapped."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from adk_yuxi.apikeys import ApiKeyForbidden, ApiKeyNotFound, InvalidApiKey
from adk_yuxi.ledger import RunEnded, RunInProgress, RunNotFound, RunWaiting
from adk_yuxi.storage import DatabaseUnavailableError, InvalidNameError, InvalidPageTokenError
from adk_yuxi.waitpoints import (
    AnswerRejected,
    StoredQuestionsInvalid,
    WaitpointConflict,
    WaitpointNotFound,
)

__all__ = ["ApiError", "error_body", "install_error_handlers"]

log = logging.getLogger("adk_yuxi.host")


class ApiError(Exception):
    """An HTTP error with a stable `code` and a message safe to show any caller."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


# Each status's own header: how to authenticate, or when to come back.
_STATUS_HEADERS: dict[int, dict[str, str]] = {
    401: {"WWW-Authenticate": "Bearer"},
    503: {"Retry-After": "1"},
}


def _json(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse(
        error_body(code, message, **extra),
        status_code=status,
        headers=_STATUS_HEADERS.get(status),
    )


_MAPPED: dict[type[Exception], tuple[int, str]] = {
    InvalidApiKey: (401, "unauthenticated"),
    ApiKeyForbidden: (403, "forbidden"),
    ApiKeyNotFound: (404, "not_found"),
    WaitpointNotFound: (404, "not_found"),
    WaitpointConflict: (409, "conflict"),
    StoredQuestionsInvalid: (409, "conflict"),
    RunInProgress: (409, "run_in_progress"),
    RunWaiting: (409, "run_waiting"),
    RunEnded: (409, "run_ended"),
}
# Their messages quote the caller's input: answered with a fixed sentence instead.
_FIXED: dict[type[Exception], tuple[int, str, str]] = {
    InvalidPageTokenError: (422, "invalid_request", "the page token is not one this API gave"),
    InvalidNameError: (422, "invalid_request", "an id or name in the request is not valid"),
    RunNotFound: (404, "not_found", "no such run"),
}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return _json(exc.status, exc.code, exc.message, **exc.extra)

    @app.exception_handler(AnswerRejected)
    async def _rejected(_: Request, exc: AnswerRejected) -> JSONResponse:
        return _json(
            422, "answer_rejected", "the answer does not fit the questions", problems=exc.problems
        )

    for kind, (status, code) in _MAPPED.items():

        async def _mapped(
            _: Request, exc: Exception, status: int = status, code: str = code
        ) -> JSONResponse:
            return _json(status, code, str(exc))

        app.add_exception_handler(kind, _mapped)

    for kind, (status, code, message) in _FIXED.items():

        async def _fixed(
            _: Request, exc: Exception, status: int = status, code: str = code, text: str = message
        ) -> JSONResponse:
            return _json(status, code, text)

        app.add_exception_handler(kind, _fixed)

    @app.exception_handler(DatabaseUnavailableError)
    async def _unavailable(request: Request, exc: DatabaseUnavailableError) -> JSONResponse:
        # Its message may name the database's host or the pool: the operator log only.
        log.warning("database unavailable on %s %s: %s", request.method, request.url.path, exc)
        return _json(503, "unavailable", "the database is unavailable; try again shortly")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        # Locations and messages only: the offending input is not echoed back.
        problems = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        return _json(422, "invalid_request", "the request is not valid", problems=problems)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:
            # FastAPI's answer to a body it cannot parse (bad encoding, nesting too deep).
            return _json(422, "invalid_request", "the request body could not be parsed")
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        return _json(exc.status_code, code, message)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _json(500, "internal_error", "the server could not complete the request")
