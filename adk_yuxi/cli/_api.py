"""`yuxi serve api`: the host API from a terminal (its keys: `_api_keys`)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._api_banner import startup_banner
from ._api_knowledge import install_served_knowledge, knowledge_options
from ._database import DB_OPTION
from ._gc import GC_OPTION, tune_for_serving
from ._metrics import MetricsServing, metrics_options

if TYPE_CHECKING:
    from adk_yuxi.knowledge import Embedder

__all__ = ["add_api_commands"]


@click.command("api")
@DB_OPTION
@click.option(
    "--agents",
    "agent_paths",
    multiple=True,
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="Agent config YAML file, or a folder of them (repeatable); all of them form one"
    " catalog whose root agents are served, each with its sub-agents and agent tools.",
)
@click.option(
    "--workspaces",
    type=click.Path(file_okay=False, path_type=Path),
    default=lambda: os.environ.get("YUXI_WORKSPACES"),
    help="Root of the per-user workspaces (present_artifacts); none: unavailable.",
)
@click.option(
    "--blobs",
    type=click.Path(file_okay=False, path_type=Path),
    default=lambda: os.environ.get("YUXI_BLOBS"),
    help="Artifact payload directory (default: beside an SQLite file, else .yuxi/blobs);"
    " every worker on one database must share it.",
)
@click.option("--model", default=None, help="Model for every agent (default: YUXI_MODEL).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option("--max-body-bytes", default=1 << 20, show_default=True, type=int)
@click.option(
    "--lease-seconds",
    default=120.0,
    show_default=True,
    type=float,
    help="How long a run outlives a dead worker before any worker closes it as failed.",
)
@click.option(
    "--cancel-poll-seconds",
    default=0.5,
    show_default=True,
    type=float,
    help="How often this worker looks for cancel requests made through other workers.",
)
@click.option(
    "--heartbeat-seconds",
    default=15.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="A stream that sent nothing for this long sends a heartbeat comment"
    " (keep it below your proxies' idle timeout).",
)
@click.option(
    "--follow-seconds",
    default=1800.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="How long GET .../events follows a run before it ends (the client follows again).",
)
@click.option(
    "--memory-embeddings",
    is_flag=True,
    envvar="YUXI_MEMORY_EMBEDDINGS",
    help="Memory search by meaning too: memories are embedded with the model"
    " YUXI_EMBEDDING_* names (unset: the offline model, the `knowledge` extra) and a"
    " search fuses it with full text. Off: full text only.",
)
@knowledge_options
@metrics_options
@GC_OPTION
def serve_api(
    db: str,
    agent_paths: tuple[Path, ...],
    workspaces: Path | None,
    blobs: Path | None,
    model: str | None,
    host: str,
    port: int,
    max_body_bytes: int,
    lease_seconds: float,
    cancel_poll_seconds: float,
    heartbeat_seconds: float,
    follow_seconds: float,
    memory_embeddings: bool,
    knowledge_url: str | None,
    knowledge_key: Path,
    metrics_port: int | None,
    metrics_path: str | None,
    gc_threshold: int,
) -> None:
    """Serve the authenticated host API for agent runs over HTTP."""
    import uvicorn

    import adk_yuxi.tools.builtin  # noqa: F401  (agent configs name the built-in tools)
    from adk_yuxi.errors import YuxiError
    from adk_yuxi.host import ApiConfig, create_app
    from adk_yuxi.runtime import AgentCatalog, Toolbox

    metrics = MetricsServing("yuxi-api", metrics_port, metrics_path)
    try:
        catalog = AgentCatalog.from_yaml(*agent_paths)
        if not catalog.names():
            shown = ", ".join(map(str, agent_paths))
            raise click.ClickException(f"no agent config (*.yaml, *.yml) in {shown}")
        skills, mcp_servers = (
            install_served_knowledge(knowledge_url, knowledge_key)
            if knowledge_url is not None
            else (None, None)
        )
        config = ApiConfig(
            database_url=db,
            agents=catalog,  # one catalog: every root agent with its tree
            workspace_root=workspaces,
            blob_dir=blobs,
            model=model,
            max_body_bytes=max_body_bytes,
            lease_seconds=lease_seconds,
            cancel_poll_seconds=cancel_poll_seconds,
            heartbeat_seconds=heartbeat_seconds,
            follow_seconds=follow_seconds,
            toolbox=Toolbox(skills=skills, mcp_servers=mcp_servers),
            memory_embedder=_memory_embedder() if memory_embeddings else None,
        )
        config.check_folders()
        app = create_app(config)
        app.router.routes.extend(metrics.routes([getattr(r, "path", "") for r in app.routes]))
        # Reached and migrated before serving: a wrong URL is one line, not a traceback
        # from inside the server's startup.
        asyncio.run(_prepare_database(config.database_url))
    except (YuxiError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(startup_banner(app, config, host, port), err=True)
    metrics.start(host, port)
    metrics.announce(f"http://{host}:{port}")
    tune_for_serving(gc_threshold)
    uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=False)


def _memory_embedder() -> Embedder | None:
    from adk_yuxi.memory import MemoryConfigError, memory_embedder_from_env

    try:
        return memory_embedder_from_env(enabled=True)
    except MemoryConfigError as exc:
        raise click.ClickException(f"--memory-embeddings: {exc}") from None


async def _prepare_database(url: str) -> None:
    from adk_yuxi.storage import open_services

    services = open_services(url)
    try:
        await services.prepare()
    finally:
        await services.close()


def add_api_commands(main: click.Group, serve: click.Group) -> None:
    from ._api_keys import api_key

    serve.add_command(serve_api)
    main.add_command(api_key)
