"""The built-in knowledge MCP server: five tools over the official `mcp` SDK.

Each call's delegation comes from its own request: the ``Authorization: Bearer``
header on streamable HTTP, or the ``yuxi/delegation`` key of the request's ``_meta``
on stdio. Our errors become MCP tool errors with their message; a storage failure
becomes one generic tool error, never a crashed server or a leaked detail. A result is
sent as its structured content and, for clients that read only text, the same JSON
once more, compact (the SDK's own text form is indented and rendered separately). A
client that reads structured content says so with ``Yuxi-Result-Form: structured``
(our ADK toolset does: ADK hands the model ``structuredContent``), and gets it alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, BeforeValidator, Field, StrictBool
from pydantic_core import to_json
from sqlalchemy.exc import SQLAlchemyError
from starlette.routing import BaseRoute

from ..errors import YuxiError
from ..observability import TracedRequests, know_tools
from ..observability._metrics import instruments
from ..observability._tracing import span
from ._errors import KnowledgeError
from ._results import (
    RESULT_FORM_HEADER,
    DocumentWindow,
    FindResult,
    ListKbsResult,
    QueryResult,
    SearchFileResult,
)
from ._service import KnowledgeService

__all__ = [
    "KNOWLEDGE_TOOL_NAMES",
    "build_knowledge_server",
    "serve_knowledge_http",
]

KNOWLEDGE_TOOL_NAMES: tuple[str, ...] = (
    "list_kbs",
    "query_kb",
    "find_kb_document",
    "open_kb_document",
    "search_file",
)
META_KEY = "yuxi/delegation"
_log = logging.getLogger(__name__)

_INSTRUCTIONS = (
    "Knowledge bases of the platform. Every call acts for the delegated user and sees "
    "only the knowledge bases that user may read now, within the session's selection."
)


def _whole_number(value: object) -> object:
    """Numbers stay numbers: ``true`` or ``"5"`` is refused instead of read as 1 or 5 (a
    model's 5.0 is still 5: JSON numbers reach ADK's client as floats)."""
    if isinstance(value, bool | str):
        raise ValueError("must be an integer")
    return value


Whole = BeforeValidator(_whole_number)


def _token(ctx: Context) -> str | None:
    headers = ctx.headers
    if headers is not None:
        value = headers.get("authorization") or ""
        scheme, _, credential = value.partition(" ")
        return credential.strip() if scheme.lower() == "bearer" else None
    meta: Any = ctx.request_context.meta
    carried = meta.get(META_KEY) if isinstance(meta, dict) else getattr(meta, META_KEY, None)
    return carried if isinstance(carried, str) else None


def _text_copy(ctx: Context) -> bool:
    """Whether this client wants the text copy (on stdio, with no headers: always)."""
    headers = ctx.headers
    if headers is None:
        return True
    return str(headers.get(RESULT_FORM_HEADER.lower(), "")).strip().lower() != "structured"


def _result(value: BaseModel | dict[str, Any], text: bool = True) -> CallToolResult:
    """The structured content, and the same JSON as text (serialized once, from it)."""
    structured = value if isinstance(value, dict) else value.model_dump(mode="json", by_alias=True)
    if not text:
        return CallToolResult(content=[], structured_content=structured)
    return CallToolResult(
        content=[TextContent(type="text", text=to_json(structured).decode())],
        structured_content=structured,
    )


async def _answer(
    tool: str, call: Awaitable[BaseModel | dict[str, Any]], ctx: Context
) -> CallToolResult:
    """The call's result; its span (`yuxi.knowledge.<tool>`) gets the delegation's
    subject, the bases visible and the hits from the service as it answers."""
    start, error = time.perf_counter(), None
    try:
        with span(f"yuxi.knowledge.{tool}", {"gen_ai.tool.name": tool}):
            value = await call
    except KnowledgeError as exc:
        error = "refused"
        raise ToolError(str(exc)) from None
    except (YuxiError, SQLAlchemyError, sqlite3.Error, OSError) as exc:
        error = "unavailable"
        _log.warning("knowledge call failed: %s", exc)
        raise ToolError("the knowledge service is unavailable; try again later") from None
    finally:
        instruments().knowledge_call(tool, time.perf_counter() - start, error)
    return _result(value, _text_copy(ctx))


def build_knowledge_server(service: KnowledgeService, *, name: str = "knowledge") -> MCPServer:
    know_tools(KNOWLEDGE_TOOL_NAMES)  # a metric label of their own, in this process too
    server: MCPServer = MCPServer(name=name, instructions=_INSTRUCTIONS)

    @server.tool(name="list_kbs")
    async def list_kbs(ctx: Context) -> Annotated[CallToolResult, ListKbsResult]:
        """Lists the knowledge bases visible in this call, with their ids and file counts."""
        return await _answer("list_kbs", service.list_kbs(_token(ctx)), ctx)

    @server.tool(name="query_kb")
    async def query_kb(
        query: Annotated[str, Field(description="What to look for, in Chinese or English.")],
        ctx: Context,
        kb_id: Annotated[
            str | None, Field(description="The knowledge base to search (from list_kbs).")
        ] = None,
        kb_ids: Annotated[
            list[str] | None,
            Field(max_length=20, description="Several bases to search, ranked together."),
        ] = None,
        top_k: Annotated[
            int, Whole, Field(ge=1, le=50, description="How many chunks to return.")
        ] = 5,
        file_id: Annotated[
            str | None, Field(description="Search only this file of the base.")
        ] = None,
    ) -> Annotated[CallToolResult, QueryResult]:
        """Searches knowledge bases (keywords and meaning, fused) and returns ranked chunks
        with their file and lines."""
        call = service.query_kb_json(_token(ctx), kb_id, query, top_k, file_id, kb_ids)
        return await _answer("query_kb", call, ctx)

    @server.tool(name="find_kb_document")
    async def find_kb_document(
        kb_id: Annotated[str, Field(description="The knowledge base holding the file.")],
        file_id: Annotated[str, Field(description="The file to search in.")],
        patterns: Annotated[
            list[str], Field(min_length=1, max_length=10, description="Keywords or regexes.")
        ],
        ctx: Context,
        use_regex: Annotated[StrictBool, Field(description="Treat patterns as regexes.")] = False,
        case_sensitive: StrictBool = False,
        max_windows: Annotated[int, Whole, Field(ge=1, le=20)] = 5,
        window_size: Annotated[
            int, Whole, Field(ge=0, le=50, description="Lines of context on each side of a match.")
        ] = 3,
    ) -> Annotated[CallToolResult, FindResult]:
        """Finds lines of a parsed document matching any pattern, with line numbers."""
        return await _answer(
            "find_kb_document",
            service.find_kb_document(
                _token(ctx), kb_id, file_id, patterns, use_regex, case_sensitive,
                max_windows, window_size,
            ),
            ctx,
        )  # fmt: skip

    @server.tool(name="open_kb_document")
    async def open_kb_document(
        kb_id: Annotated[str, Field(description="The knowledge base holding the file.")],
        file_id: Annotated[str, Field(description="The file to read.")],
        ctx: Context,
        line: Annotated[
            int | None, Whole, Field(ge=1, description="Start the window at this 1-based line.")
        ] = None,
        offset: Annotated[
            int | None, Whole, Field(ge=0, description="Start at this 0-based line (next_offset).")
        ] = None,
        window_size: Annotated[
            int, Whole, Field(ge=1, le=400, description="Lines to return.")
        ] = 80,
        char_offset: Annotated[
            int,
            Whole,
            Field(ge=0, description="Start this far into the first line (next_char_offset)."),
        ] = 0,
    ) -> Annotated[CallToolResult, DocumentWindow]:
        """Reads a window of a parsed document; continue with next_offset, or within a
        long line with the same line and next_char_offset."""
        return await _answer(
            "open_kb_document",
            service.open_kb_document(
                _token(ctx), kb_id, file_id, line, offset, window_size, char_offset
            ),
            ctx,
        )

    @server.tool(name="search_file")
    async def search_file(
        ctx: Context,
        kb_name: Annotated[
            str | None, Field(description="Only this knowledge base (its name).")
        ] = None,
        query: Annotated[str | None, Field(description="Part of the file name.")] = None,
        offset: Annotated[int, Whole, Field(ge=0)] = 0,
        limit: Annotated[int, Whole, Field(ge=1, le=100)] = 20,
    ) -> Annotated[CallToolResult, SearchFileResult]:
        """Finds files by name across the visible knowledge bases, one page at a time."""
        call = service.search_file(_token(ctx), kb_name, query, offset, limit)
        return await _answer("search_file", call, ctx)

    return server


@contextlib.asynccontextmanager
async def serve_knowledge_http(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    json_response: bool = True,
    routes: Sequence[BaseRoute] = (),
) -> AsyncIterator[str]:
    """Runs the server over streamable HTTP (stateless; JSON responses by default) in
    this event loop and yields its URL; stops it on exit. `routes` are served beside
    ``/mcp`` (the metrics path)."""
    import uvicorn

    # Stateless HTTP ends a "session" per request, and the SDK logs each at INFO
    # ("Terminating session: None"): one line per call on the operator's terminal. Quiet
    # it unless someone chose that logger's level.
    transport_log = logging.getLogger("mcp.server.streamable_http")
    if transport_log.level == logging.NOTSET:
        transport_log.setLevel(logging.WARNING)
    inner = server.streamable_http_app(json_response=json_response, stateless_http=True, host=host)
    inner.router.routes.extend(routes)
    # Each request joins the trace of the caller's `traceparent` (the runtime's tool call).
    app = TracedRequests(inner)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    runner = uvicorn.Server(config)
    task = asyncio.create_task(runner.serve())
    try:
        while not runner.started:
            if task.done():
                task.result()
                raise RuntimeError("the knowledge server stopped while starting")
            await asyncio.sleep(0.01)
        bound = runner.servers[0].sockets[0].getsockname()
        yield f"http://{host}:{bound[1]}/mcp"
    finally:
        runner.should_exit = True
        await task
