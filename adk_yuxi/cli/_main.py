"""Entry point of the `yuxi` console command."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import click

from ._group import YuxiGroup
from ._imports import import_agent_folder, import_module

__all__ = ["main"]


@click.group(cls=YuxiGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="adk-yuxi", prog_name="yuxi")
def main() -> None:
    """adk_yuxi: the Yuxi tool system on Google's Agent Development Kit.

    Start with `yuxi demo`, an offline tour. `yuxi create NAME` writes an agent folder of
    your own: run it with `adk run NAME`, or every agent folder here with `adk web .`.
    """


@main.command()
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path(".yuxi/demo.db"),
    show_default=True,
    help="The tour's own SQLite file, recreated on every run (a file the tour did not"
    " make is refused, never overwritten); the other commands' data is not in it.",
)
def demo(db_path: Path) -> None:
    """Play the offline tour: real tool calls on the Runner, state kept in SQLite."""
    from ._tour import NotADemoDatabase, run_tour

    try:
        asyncio.run(run_tour(db_path))
    except NotADemoDatabase as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the catalog as JSON.")
@click.option("--long", "long_", is_flag=True, help="Print whole descriptions, not summaries.")
@click.option(
    "--import",
    "modules",
    multiple=True,
    metavar="MODULE",
    help="Import this module first (dotted name from the working directory, or a .py"
    " file) so the tools it registers are listed. Repeatable.",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Import this agent folder first, as `adk run` would. Repeatable.",
)
def tools(as_json: bool, long_: bool, modules: tuple[str, ...], agents: tuple[Path, ...]) -> None:
    """List the tools: the built-in ones, those of --import / --agent, and the base tools
    an app's capabilities bring (category `base`)."""
    import adk_yuxi.tools.builtin  # noqa: F401
    from adk_yuxi.tools import ToolRegistry, catalog
    from adk_yuxi.tools.base import register_base_tools

    for name in modules:
        import_module(name)
    for folder in agents:
        import_agent_folder(folder)
    base = ToolRegistry()
    register_base_tools(base)
    entries = catalog() + base.catalog()
    if as_json:
        click.echo(json.dumps([e.to_dict() for e in entries], ensure_ascii=False, indent=2))
        return
    from ._columns import indented

    for entry in entries:
        tags = ", ".join(entry.tags)
        click.echo(f"{entry.id:<20} {entry.display_name:<22} [{entry.category}] {tags}")
        click.echo(indented(entry.description, 21, whole=long_))


@main.command()
@click.option("--ping", is_flag=True, help="Also send one tiny request and show the answer.")
def model(ping: bool) -> None:
    """Check the model YUXI_MODEL selects as a run would: name, credentials, base URL."""
    from adk_yuxi.models import (
        DemoLlm,
        ModelConfigError,
        OpenAICompatibleLlm,
        ping_model,
        resolve_model,
    )

    try:
        llm = resolve_model()
    except ModelConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{type(llm).__name__}: {llm.model}")
    if isinstance(llm, OpenAICompatibleLlm):
        click.echo(f"base URL: {llm.effective_base_url}")
    elif isinstance(llm, DemoLlm):
        click.echo("offline: rule-based answers, no network, not an LLM")
    if not ping:
        return
    result = asyncio.run(ping_model(llm))
    if not result.ok:
        raise click.ClickException(f"ping failed after {result.seconds:.1f} s: {result.detail}")
    click.echo(f"ping: answered in {result.seconds:.1f} s: {result.detail[:200]}")


@main.command("web-check")
@click.option(
    "--tool",
    type=click.Choice(["web_search", "web_fetch"]),
    default="web_search",
    show_default=True,
)
@click.option("--provider", help="Check this provider instead of the configured choice.")
@click.option(
    "--key-stdin",
    is_flag=True,
    help="Read a draft key for --provider from standard input (never from arguments).",
)
def web_check(tool: str, provider: str | None, key_stdin: bool) -> None:
    """Check the web tools' configuration with one real provider call; nothing is saved.

    Settings come from the environment, as a server without host settings reads them;
    a draft key read from standard input is tried in place of the configured one.
    """
    from adk_yuxi.web import WebConfigError, WebSettings, check_web_settings

    draft: dict[str, object] = {}
    if provider is not None:
        draft["search_provider" if tool == "web_search" else "fetch_provider"] = provider
    if key_stdin:
        if provider is None:
            raise click.UsageError("--key-stdin needs --provider")
        draft[f"{provider}_api_key"] = sys.stdin.readline().strip()
    try:
        settings = WebSettings.draft(**draft)
    except WebConfigError as exc:
        raise click.UsageError(str(exc)) from None
    result = asyncio.run(check_web_settings(settings, tool))  # type: ignore[arg-type]
    click.echo(json.dumps(result.to_dict(), ensure_ascii=False))
    if not result.ok:
        raise SystemExit(1)


def _add_knowledge_commands() -> None:
    from ._access import access
    from ._api import add_api_commands
    from ._create import create
    from ._explain import explain
    from ._kb import kb, serve
    from ._marks import marks
    from ._runs import runs
    from ._waitpoints import waitpoints

    main.add_command(create)
    main.add_command(runs)
    main.add_command(waitpoints)
    main.add_command(marks)
    access.add_command(explain)
    main.add_command(access)
    main.add_command(kb)
    main.add_command(serve)
    add_api_commands(main, serve)


_add_knowledge_commands()
