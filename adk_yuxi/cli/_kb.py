"""`yuxi kb ...` and `yuxi serve knowledge`: operating knowledge bases from a terminal.

These commands act as the operator of the database they are pointed at (no delegation):
they create and fill knowledge bases. Users reach the content only through the
knowledge server, which checks each call's delegation and the user's current rights.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ._gc import GC_OPTION, tune_for_serving

__all__ = ["kb", "serve"]

T = TypeVar("T")
DEFAULT_DB = "sqlite+aiosqlite:///.yuxi/knowledge.db"
DEFAULT_KEY = Path(".yuxi/knowledge-key.jwk")


def _url(db: str) -> str:
    """A database URL, or a plain SQLite file path turned into one."""
    return db if "://" in db else f"sqlite+aiosqlite:///{Path(db).expanduser()}"


_DB_OPTION = click.option(
    "--db",
    default=lambda: os.environ.get("YUXI_KNOWLEDGE_DB", DEFAULT_DB),
    show_default="$YUXI_KNOWLEDGE_DB or " + DEFAULT_DB,
    help="Database URL (sqlite+aiosqlite:///..., postgresql+asyncpg://...) or SQLite file.",
)


def _missing_sqlite_file(url: str) -> Path | None:
    """The SQLite file a URL names, if it does not exist yet (None otherwise)."""
    from adk_yuxi._sql.urls import parse_database_url
    from adk_yuxi.errors import YuxiError

    try:
        target = parse_database_url(url)
    except YuxiError:
        return None  # the store reports a bad URL in its own words
    if target.backend != "sqlite" or not target.url.database:
        return None
    path = Path(target.url.database).expanduser()
    return None if path.exists() else path


def _run(db: str, work: Callable[[Any], Awaitable[T]], *, existing: bool = True) -> T:
    """Runs `work(store)`; with `existing`, on a database that is there already, so a
    command that only reads (or fills a base) never leaves an empty file behind a typo."""
    from adk_yuxi.errors import YuxiError
    from adk_yuxi.knowledge import KnowledgeStore

    missing = _missing_sqlite_file(_url(db)) if existing else None
    if missing is not None:
        raise click.ClickException(
            f"no knowledge database at {missing} (`yuxi kb create` makes one)"
        )

    async def main() -> T:
        store = KnowledgeStore(_url(db))
        try:
            await store.prepare()
            return await work(store)
        finally:
            await store.close()

    try:
        return asyncio.run(main())
    except YuxiError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def kb() -> None:
    """Create, fill, list and query knowledge bases."""


@kb.command("create")
@click.argument("name")
@click.option("--id", "kb_id", help="The knowledge base id (default: generated).")
@click.option("--description", default="", help="What the knowledge base holds.")
@click.option("--owner", default="admin", show_default=True, help="The creator's user id.")
@click.option("--public", is_flag=True, help="Let every user read it (default: owner only).")
@_DB_OPTION
def create(
    name: str, kb_id: str | None, description: str, owner: str, public: bool, db: str
) -> None:
    """Create a knowledge base NAME."""
    from adk_yuxi.access import AccessRepository, NotFoundError, ShareConfig, User

    async def work(store: Any) -> Any:
        access = AccessRepository(store.store)
        try:
            await access.get_user(owner)
        except NotFoundError:
            await access.save_user(User(id=owner))
            click.echo(f"created user {owner!r}", err=True)
        share = ShareConfig.public() if public else ShareConfig.private()
        return await store.create_kb(
            name, creator_id=owner, share=share, description=description, kb_id=kb_id
        )

    made = _run(db, work, existing=False)
    click.echo(f"{made.kb_id}\t{made.name}")


@kb.command("ingest")
@click.argument("kb_id")
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@_DB_OPTION
@click.option(
    "--stop-on-error",
    is_flag=True,
    help="Stop at the first file that cannot be ingested (default: report it, go on).",
)
def ingest(kb_id: str, paths: tuple[Path, ...], db: str, stop_on_error: bool) -> None:
    """Add files to KB_ID (a file of the same name is replaced), with progress; each
    file is reported as soon as it is stored, and a failed one does not undo the others."""
    from adk_yuxi.knowledge import TerminalProgress, ingest_each

    async def work(store: Any) -> int:
        failed = 0
        outcomes = ingest_each(
            store,
            kb_id,
            paths,
            keep_going=not stop_on_error,
            progress_for=lambda name: TerminalProgress(name, sys.stderr),
        )
        async for outcome in outcomes:
            if outcome.file is not None:
                f = outcome.file
                click.echo(f"{f.file_id}\t{f.name}\tv{f.version}\t{f.chunk_count} chunks")
            else:
                failed += 1
                click.echo(f"failed\t{outcome.path}\t{outcome.error}", err=True)
        return failed

    if _run(db, work):
        raise SystemExit(1)


@kb.command("list")
@click.argument("kb_id", required=False)
@_DB_OPTION
def list_(kb_id: str | None, db: str) -> None:
    """List the knowledge bases, or the files of KB_ID."""

    async def work(store: Any) -> list[str]:
        if kb_id is not None:
            await store.get_kb(kb_id)
            files = await store.list_files(kb_id)
            return [f"{f.file_id}\t{f.name}\t{f.total_lines} lines\tv{f.version}" for f in files]
        bases = await store.list_kbs()
        counts = await store.file_counts([b.kb_id for b in bases])
        return [f"{b.kb_id}\t{b.name}\t{counts.get(b.kb_id, 0)} files" for b in bases]

    for line in _run(db, work):
        click.echo(line)


@kb.command("query")
@click.argument("kb_id")
@click.argument("question")
@click.option("--top-k", default=5, show_default=True, type=click.IntRange(1, 50))
@_DB_OPTION
def query(kb_id: str, question: str, top_k: int, db: str) -> None:
    """Search KB_ID for QUESTION and print the ranked chunks."""

    async def work(store: Any) -> list[Any]:
        await store.get_kb(kb_id)
        return list(await store.query(kb_id, question, top_k=top_k))

    hits = _run(db, work)
    if not hits:
        click.echo("no matching chunks")
    for rank, hit in enumerate(hits, start=1):
        click.echo(
            f"{rank}. {hit.file_name}:{hit.start_line}-{hit.end_line} (score {hit.score:.4g})"
        )
        click.echo("   " + hit.content.replace("\n", "\n   "))


@click.group()
def serve() -> None:
    """Run a built-in server."""


@serve.command("knowledge")
@_DB_OPTION
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--key",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_KEY,
    show_default=True,
    help="The runtime's delegation key as a JWK file: its public half is enough (a private"
    " key is read for its public half); created, private, if missing.",
)
@click.option("--stdio", is_flag=True, help="Serve over stdio instead of HTTP.")
@GC_OPTION
def serve_knowledge(
    db: str, host: str, port: int, key: Path, stdio: bool, gc_threshold: int
) -> None:
    """Serve the knowledge MCP server (streamable HTTP at /mcp, or stdio)."""
    from adk_yuxi.access import AccessRepository
    from adk_yuxi.knowledge import (
        DelegationKeys,
        KnowledgeError,
        KnowledgeService,
        KnowledgeStore,
        build_knowledge_server,
        load_verifier,
        serve_knowledge_http,
    )

    try:
        if key.exists():
            verifier = load_verifier(key)
        else:  # one machine: the runtime signs with the file created here
            verifier = DelegationKeys.load_or_create(key).verifier()
            click.echo(
                f"created the delegation key {key} (private, mode 0600): the runtime signs"
                " with it; elsewhere give this server only its public half",
                err=True,
            )
    except KnowledgeError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot create the key file {key}: {exc.strerror}") from None

    async def main() -> None:
        store = KnowledgeStore(_url(db))
        await store.prepare()
        service = KnowledgeService(store, AccessRepository(store.store), verifier)
        server = build_knowledge_server(service)
        tune_for_serving(gc_threshold)
        try:
            if stdio:
                await server.run_stdio_async()
                return
            async with serve_knowledge_http(server, host=host, port=port) as url:
                click.echo(f"knowledge MCP server at {url} (Ctrl-C stops it)", err=True)
                await asyncio.Event().wait()
        finally:
            await store.close()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
