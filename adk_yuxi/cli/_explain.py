"""`yuxi access explain`: which rule allows or refuses a user a tool, a knowledge base or
a skill in an agent, decided by the runtime's own functions (`explain_access`) on the
same agent configs (`--agents`, as `yuxi serve api` takes them) and the same database."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._database import DB_OPTION
from ._imports import import_module
from ._table import JSON_OPTION, echo_json, echo_line, echo_table

if TYPE_CHECKING:
    from adk_yuxi.access import AccessRepository
    from adk_yuxi.runtime.authorization._explain import Explanation

__all__ = ["explain"]

_KINDS = {"agent": "agent", "knowledge_base": "knowledge_base", "skill": "skill"}


async def _recorded(repository: AccessRepository, kind: str, name: str) -> dict[str, Any] | None:
    """The access record behind a share-scoped decision: who made it, who may read it."""
    from adk_yuxi.access import NotFoundError, ResourceKind

    if kind not in _KINDS:
        return None
    try:
        record = await repository.get_resource(ResourceKind(_KINDS[kind]), name)
    except NotFoundError:
        return {"recorded": False}
    scope = record.share.read_scope
    return {
        "recorded": True,
        "creator_id": record.creator_id,
        "enabled": record.enabled,
        "read_scope": {"kind": scope.kind, "ids": sorted(scope.ids)},
    }


def _explain(
    db: str, paths: tuple[Path, ...], user: str, agent: str, **what: Any
) -> tuple[Explanation, dict[str, Any] | None]:
    from adk_yuxi.access import AccessRepository
    from adk_yuxi.errors import YuxiError
    from adk_yuxi.runtime import AgentCatalog, AgentTree
    from adk_yuxi.runtime.assembly._app import check_tree
    from adk_yuxi.runtime.authorization._explain import explain_access
    from adk_yuxi.runtime.rights._tree_runtime import TreeRuntimeFactory

    async def main() -> tuple[Explanation, dict[str, Any] | None]:
        catalog = AgentCatalog.from_yaml(*paths)
        trees = {t.root: t for t in AgentTree.forest(catalog)}
        tree = trees.get(agent)
        if tree is None:
            served = ", ".join(sorted(trees)) or "none"
            raise click.ClickException(
                f"{agent!r} is not an agent the host API serves from --agents (root agents:"
                f" {served})"
            )
        check_tree(tree)  # as the server refuses to start on it
        repository = AccessRepository(db)
        try:
            await repository.prepare()
            factory = TreeRuntimeFactory.of(tree)
            found = await explain_access(repository, factory, user, agent, **what)
            decided = found.decision
            about = await _recorded(repository, decided.kind, decided.name or agent)
            return found, about
        finally:
            await repository.close()

    try:
        return asyncio.run(main())
    except (YuxiError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


@click.command("explain")
@click.argument("user_id")
@click.argument("agent")
@click.option("--tool", default=None, help="A tool the model would call.")
@click.option("--kb", default=None, help="A knowledge base a tool argument would name.")
@click.option("--skill", default=None, help="A skill the model would load.")
@click.option(
    "--active-skill",
    "activated",
    multiple=True,
    metavar="SKILL",
    help="With --tool: a skill already loaded in the session (repeatable).",
)
@click.option(
    "--agents",
    "agent_paths",
    multiple=True,
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="The agent config YAML files or folders the server serves (as `yuxi serve api`).",
)
@click.option(
    "--import",
    "modules",
    multiple=True,
    metavar="MODULE",
    help="Import this module first so the tools it registers exist, as on the server.",
)
@JSON_OPTION
@DB_OPTION
def explain(
    user_id: str,
    agent: str,
    tool: str | None,
    kb: str | None,
    skill: str | None,
    activated: tuple[str, ...],
    agent_paths: tuple[Path, ...],
    modules: tuple[str, ...],
    as_json: bool,
    db: str,
) -> None:
    """Which rule allows or refuses USER_ID a run of AGENT, and in it a --tool, a --kb
    or a --skill: the runtime's own decisions on the access records as they are now.

    Exit status 0 either way; the answer is `allowed` or `refused` with its rule.
    """
    import adk_yuxi.tools.builtin  # noqa: F401  (agent configs name the built-in tools)

    if sum(x is not None for x in (tool, kb, skill)) > 1:
        raise click.UsageError("give at most one of --tool, --kb, --skill")
    if activated and tool is None:
        raise click.UsageError("--active-skill goes with --tool")
    for name in modules:
        import_module(name)
    found, about = _explain(
        db, agent_paths, user_id, agent, tool=tool, kb=kb, skill=skill, activated=activated
    )
    if as_json:
        echo_json({**found.to_dict(), "record": about})
        return
    rows = [
        [s.kind, s.name, "allowed" if s.allowed else "refused", s.rule, s.detail]
        for s in found.steps
    ]
    echo_table(("KIND", "NAME", "DECISION", "RULE", "DETAIL"), rows)
    if about is not None and about.get("recorded"):
        scope = about["read_scope"]
        readers = (
            "everyone"
            if scope["kind"] == "global"
            else f"{scope['kind']}s {', '.join(scope['ids'])}"
            if scope["ids"]
            else "its creator only"
        )
        state = "enabled" if about["enabled"] else "disabled"
        echo_line(f"record: created by {about['creator_id']}, read by {readers}, {state}")
    elif about is not None:
        click.echo("record: none in the access database")
    verdict = "allowed" if found.allowed else "refused"
    echo_line(f"{verdict}: {found.decision.rule}")
