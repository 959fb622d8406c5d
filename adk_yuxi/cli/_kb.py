"""`yuxi kb ...` and `yuxi serve knowledge`: operating knowledge bases from a terminal.

These commands act as the operator of the database they are pointed at (no delegation):
they create and fill knowledge bases. Users reach the content only through the
knowledge server, which checks each call's delegation and the user's current rights.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ._database import DB_OPTION
from ._gc import GC_OPTION, tune_for_serving
from ._metrics import MetricsServing, metrics_options
from ._table import echo_cells, echo_line

__all__ = ["kb", "serve"]

T = TypeVar("T")
DEFAULT_KEY = Path(".yuxi/knowledge-key.jwk")


def _missing_sqlite_file(url: str) -> Path | None:
    """The SQLite file a URL names, if it does not exist yet (None otherwise)."""
    from adk_yuxi._sql.urls import parse_database_url

    target = parse_database_url(url)  # checked already by --db
    if target.backend != "sqlite" or not target.url.database:
        return None
    path = Path(target.url.database).expanduser()
    return None if path.exists() else path


def _run(
    db: str, work: Callable[[Any], Awaitable[T]], *, existing: bool = True, embed: bool = False
) -> T:
    """Runs `work(store)`; with `existing`, on a database that is there already, so a
    command that only reads (or fills a base) never leaves an empty file behind a typo;
    with `embed`, the store embeds with the model `YUXI_EMBEDDING_*` configures."""
    from adk_yuxi.errors import YuxiError
    from adk_yuxi.knowledge import KnowledgeStore, embedder_from_env

    missing = _missing_sqlite_file(db) if existing else None
    if missing is not None:
        raise click.ClickException(f"no database at {missing} (`yuxi kb create` makes one there)")

    async def main() -> T:
        store = KnowledgeStore(db, embedder=embedder_from_env() if embed else None)
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
@click.option(
    "--owner",
    default=None,
    metavar="USER",
    help="The creator, an existing user (`yuxi access user add USER`); required. The owner"
    " reads and manages a private base.",
)
@click.option("--public", is_flag=True, help="Let every user read it (default: owner only).")
@DB_OPTION
def create(
    name: str, kb_id: str | None, description: str, owner: str | None, public: bool, db: str
) -> None:
    """Create a knowledge base NAME owned by an existing user (`--owner`)."""
    from adk_yuxi.access import AccessRepository, NotFoundError, ShareConfig

    if owner is None:
        # Checked here rather than by click, so a misspelt --db is reported first.
        raise click.UsageError(
            "Missing option '--owner': a knowledge base belongs to an existing user;"
            " add one with `yuxi access user add USER` and pass `--owner USER`"
        )
    missing = _missing_sqlite_file(db)
    if missing is not None:
        raise click.ClickException(
            f"no user {owner!r}: there is no database at {missing} yet"
            f" (`yuxi access user add {owner}` creates both)"
        )

    async def work(store: Any) -> Any:
        try:
            await AccessRepository(store.store).get_user(owner)
        except NotFoundError:
            raise click.ClickException(
                f"no user {owner!r} in this database: add it with `yuxi access user add {owner}`"
            ) from None
        share = ShareConfig.public() if public else ShareConfig.private()
        return await store.create_kb(
            name, creator_id=owner, share=share, description=description, kb_id=kb_id
        )

    made = _run(db, work, existing=False)
    echo_cells([made.kb_id, made.name])


@kb.command("ingest")
@click.argument("kb_id")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@DB_OPTION
@click.option(
    "--stop-on-error",
    is_flag=True,
    help="Stop at the first file that cannot be ingested (default: report it, go on).",
)
def ingest(kb_id: str, paths: tuple[Path, ...], db: str, stop_on_error: bool) -> None:
    """Add files, or every file in folders, to KB_ID, with progress.

    A folder is walked in name order; hidden entries, symbolic links and files no
    converter reads are skipped with a note. A file of the same name is replaced. Each
    file is reported as soon as it is stored; a failed one does not undo the others.
    """
    from adk_yuxi.documents import DEFAULT_MAX_BYTES
    from adk_yuxi.knowledge import TerminalProgress, ingest_each

    from ._kb_files import plan_ingest, read_walked

    plan = plan_ingest(paths)
    for note in plan.skipped:
        echo_line(f"skipped {note}", err=True)
    if not plan.files:
        raise click.ClickException("no file to ingest in " + ", ".join(map(str, paths)))
    total = len(plan.files)
    walked = {file.path: file for file in plan.files if file.folder is not None}
    numbers = {file.path.name: n for n, file in enumerate(plan.files, start=1)}

    async def read(path: Path) -> Path | bytes:
        file = walked.get(path)
        if file is None:  # named by the user: taken as given
            return path
        return await asyncio.to_thread(read_walked, file, DEFAULT_MAX_BYTES)

    def progress_for(name: str) -> TerminalProgress:
        label = name if total == 1 else f"[{numbers.get(name, '?')}/{total}] {name}"
        return TerminalProgress(label, sys.stderr)

    async def work(store: Any) -> int:
        await store.get_kb(kb_id)
        failed = 0
        outcomes = ingest_each(
            store,
            kb_id,
            [file.path for file in plan.files],
            keep_going=not stop_on_error,
            progress_for=progress_for,
            read=read,
        )
        async for outcome in outcomes:
            if outcome.file is not None:
                f = outcome.file
                echo_cells([f.file_id, f.name, f"v{f.version}", f"{f.chunk_count} chunks"])
            else:
                failed += 1
                echo_cells(["failed", outcome.path, outcome.error], err=True)
        return failed

    if _run(db, work, embed=True):
        raise SystemExit(1)


@kb.command("list")
@click.argument("kb_id", required=False)
@DB_OPTION
def list_(kb_id: str | None, db: str) -> None:
    """List the knowledge bases, or the files of KB_ID."""

    async def work(store: Any) -> list[list[str]]:
        if kb_id is not None:
            await store.get_kb(kb_id)
            files = await store.list_files(kb_id)
            return [[f.file_id, f.name, f"{f.total_lines} lines", f"v{f.version}"] for f in files]
        bases = await store.list_kbs()
        counts = await store.file_counts([b.kb_id for b in bases])
        return [[b.kb_id, b.name, f"{counts.get(b.kb_id, 0)} files"] for b in bases]

    for cells in _run(db, work):
        echo_cells(cells)


@kb.command("query")
@click.argument("kb_id")
@click.argument("question")
@click.option("--top-k", default=5, show_default=True, type=click.IntRange(1, 50))
@DB_OPTION
def query(kb_id: str, question: str, top_k: int, db: str) -> None:
    """Search KB_ID for QUESTION and print the ranked chunks."""

    async def work(store: Any) -> list[Any]:
        await store.get_kb(kb_id)
        return list(await store.query(kb_id, question, top_k=top_k))

    hits = _run(db, work, embed=True)
    if not hits:
        click.echo("no matching chunks")
    for rank, hit in enumerate(hits, start=1):
        echo_line(
            f"{rank}. {hit.file_name}:{hit.start_line}-{hit.end_line} (score {hit.score:.4g},"
            f" {'+'.join(hit.signals)})"
        )
        for line in hit.content.split("\n"):  # the chunk's own lines, each escaped
            echo_line("   " + line)


@kb.command("embed")
@click.argument("kb_id", required=False)
@click.option("--replace", is_flag=True, help="Drop the base's vectors and embed it again.")
@click.option("--ping", is_flag=True, help="Only embed one short text and report.")
@DB_OPTION
def embed(kb_id: str | None, replace: bool, ping: bool, db: str) -> None:
    """Fill in the vectors KB_ID lacks, with the model YUXI_EMBEDDING_MODEL names.

    Resumable: an interrupted run (Ctrl-C) keeps the batches it finished.
    """
    from adk_yuxi.knowledge import TerminalProgress, ping_embedder

    if ping:
        result = ping_embedder()
        click.echo(("ok" if result.ok else "failed") + f"\t{result.detail}")
        if not result.ok:
            raise SystemExit(1)
        return
    if kb_id is None:
        raise click.UsageError("give KB_ID (or --ping)")

    async def work(store: Any) -> int:
        return int(
            await store.embed(kb_id, progress=TerminalProgress(kb_id, sys.stderr), replace=replace)
        )

    click.echo(f"{kb_id}\t{_run(db, work, embed=True)} chunks embedded")


@click.group()
def serve() -> None:
    """Run a built-in server."""


@serve.command("knowledge")
@DB_OPTION
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
@metrics_options
@GC_OPTION
def serve_knowledge(
    db: str,
    host: str,
    port: int,
    key: Path,
    stdio: bool,
    metrics_port: int | None,
    metrics_path: str | None,
    gc_threshold: int,
) -> None:
    """Serve the knowledge MCP server (streamable HTTP at /mcp, or stdio)."""
    if stdio and metrics_path is not None:
        raise click.ClickException("--metrics-path needs the HTTP server (use --metrics-port)")
    metrics = MetricsServing("yuxi-knowledge", metrics_port, metrics_path)

    from adk_yuxi.access import AccessRepository
    from adk_yuxi.knowledge import (
        DelegationKeys,
        KnowledgeError,
        KnowledgeService,
        KnowledgeStore,
        build_knowledge_server,
        embedder_from_env,
        load_verifier,
        serve_knowledge_http,
    )

    try:
        embedder = embedder_from_env()
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

    metrics.start(host, port)

    async def main() -> None:
        store = KnowledgeStore(db, embedder=embedder)
        await store.prepare()
        service = KnowledgeService(store, AccessRepository(store.store), verifier)
        server = build_knowledge_server(service)
        tune_for_serving(gc_threshold)
        try:
            if stdio:
                await server.run_stdio_async()
                return
            routes = metrics.routes(["/mcp"])
            async with serve_knowledge_http(server, host=host, port=port, routes=routes) as url:
                click.echo(f"knowledge MCP server at {url} (Ctrl-C stops it)", err=True)
                metrics.announce(url.removesuffix("/mcp"))
                await asyncio.Event().wait()
        finally:
            await store.close()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
