"""What each route declares in the OpenAPI document besides its success body.

Error answers all share `ErrorBody`; a route lists exactly the statuses it can give.
Streaming routes answer `text/event-stream` (the frames are described once, here) and
downloads answer the artifact's bytes; neither is JSON, so neither has a model.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import StreamingResponse

from ._schemas import ErrorBody

__all__ = ["DOWNLOAD", "EventStream", "errors", "event_stream", "install_openapi"]

_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
_FASTAPI_422 = "#/components/schemas/HTTPValidationError"

_WHY = {
    401: "No live API key (`Authorization: Bearer yxk_…`): missing, unknown, revoked, expired,"
    " or its user is disabled.",
    403: "The caller may not act for another user.",
    404: "No such resource for the caller: another user's resource, and an agent the caller"
    " may not use, are answered as missing.",
    409: "Conflicts with the current state, or an `Idempotency-Key` reused with another body.",
    413: "The body is larger than the configured limit (by declared length or as it arrives).",
    415: "The body is not declared JSON (`Content-Type: application/json`).",
    422: "The request is not valid: `problems` names the locations, never the input.",
    431: "The request headers are larger than the configured limit.",
    500: "`internal_error`: the server failed; the details are in the operator log only.",
    503: "`unavailable`: the database cannot be reached or its connections stayed busy;"
    " retry after `Retry-After` seconds.",
}

SSE_FRAMES = (
    "A stream of server-sent events: one `adk_event` frame per ADK event (`data` is the"
    " event as ADK serialises it, `id` its event id, the cursor for `Last-Event-ID`), then"
    " one `run_status` frame `{status, run_id, invocation_id, error_code}` whose status is"
    " the run ledger's outcome (`completed`, `waiting`, `failed` with its `error_code`,"
    " `cancelled`; `none` when a followed session has no recorded run). A stream that"
    " sends nothing for the heartbeat interval sends a `: heartbeat` comment line."
)

DOWNLOAD: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The version's bytes with its stored media type (unsafe types are"
        " sent as `application/octet-stream`), `Content-Length`, `ETag` (the payload's"
        " sha256), `X-Artifact-Version` and `Content-Disposition: attachment`.",
        "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
    }
}


class EventStream(StreamingResponse):
    """A `text/event-stream` answer (the media type the document shows)."""

    media_type = "text/event-stream"


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The error answers a route can give, each with the shared error body."""
    return {code: {"model": ErrorBody, "description": _WHY[code]} for code in codes}


def event_stream(*codes: int) -> dict[int | str, dict[str, Any]]:
    """A streaming route's answers: the event stream and its errors."""
    return {
        200: {
            "description": SSE_FRAMES,
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **errors(*codes),
    }


def _tidy(doc: dict[str, Any]) -> None:
    """Errors are JSON `ErrorBody` on every route (FastAPI would give a streaming
    route's errors its stream type); FastAPI's own 422 model, which this API never
    sends, is dropped, so a route lists only the 422 it declares; authenticated routes
    name the bearer scheme; 431 and 500 are listed on every route, 503 on every route
    that reads the database (all but the health check)."""
    for operations in doc.get("paths", {}).values():
        for operation in operations.values():
            responses = operation["responses"]
            for status in list(responses):
                if not status.isdigit() or int(status) < 400:
                    continue
                schema = responses[status].get("content", {}).get("application/json", {})
                if schema.get("schema", {}).get("$ref") == _FASTAPI_422:
                    del responses[status]
                else:
                    responses[status]["content"] = _ERROR_CONTENT
            for status in (431, 500):  # any request can meet these
                responses[str(status)] = {"description": _WHY[status], "content": _ERROR_CONTENT}
            if "401" in responses:
                operation["security"] = [{"apiKey": []}]
                responses["503"] = {"description": _WHY[503], "content": _ERROR_CONTENT}
    components = doc.setdefault("components", {})
    schemas = components.get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    components["securitySchemes"] = {
        "apiKey": {"type": "http", "scheme": "bearer", "description": "An API key, `yxk_…`."}
    }


def install_openapi(app: FastAPI) -> None:
    """`app.openapi()` (and `/openapi.json`) answers the tidied document."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            _tidy(doc)
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
