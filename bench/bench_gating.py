"""Gating and authorization cost per model call: Yuxi runtime vs a plain ADK agent.

1,000 registered tools and 100 skills (5 tool dependencies each, 3 of them active in
session state). The Yuxi app shows the model 20 configured tools, the 15 tools of the
active skills and the skill loader, and re-authorizes every tool call. The anchor is a
plain `LlmAgent` holding exactly the same visible tool objects. Both run the same
scripted turns (4 tool calls and a final answer, i.e. 5 model calls) through the real
Runner on an in-memory session. A third contender adds the live rights on a real
SQLite access database (the change marker read per model step and per tool call).
Two more build the app from a principal source instead of a fixed principal (one App
for many users): the principal is resolved at the start of every run and the assembled
runtime taken from the per-principal cache; once from memory, once loaded from the
SQLite access database with live revocation.

    python -m bench.bench_gating [--turns N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.skills import Frontmatter, Skill
from google.adk.tools.base_tool import BaseTool
from google.genai import types

from adk_yuxi.access import (
    AccessRepository,
    Principal,
    ResourceKind,
    ResourceRecord,
    ShareConfig,
    User,
)
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.runtime import (
    Access,
    AgentConfig,
    AuthorizationPlugin,
    Toolbox,
    build_app,
    compute_visibility,
)
from adk_yuxi.skills import SkillCatalog, SkillSpec
from adk_yuxi.testing import call
from adk_yuxi.tools import StrictFunctionTool, ToolRegistry
from bench._timing import format_table, median_rate, timed_rounds

TOOLS, SKILLS, DEPS, CONFIGURED, ACTIVE, CALLS = 1000, 100, 5, 20, 3, 4
AGENT, USER = "bench", "u"
STATE = {f"_adk_activated_skill_{AGENT}": [f"skill-{i:03d}" for i in range(ACTIVE)]}


def _make_tool(i: int) -> BaseTool:
    def fn(value: int) -> dict[str, Any]:
        return {"value": value}

    fn.__name__ = f"t_{i:04d}"
    fn.__doc__ = f"Tool number {i}."
    return StrictFunctionTool(fn)


def _world() -> tuple[ToolRegistry, SkillCatalog, Principal]:
    registry = ToolRegistry()
    for i in range(TOOLS):
        registry.register(_make_tool(i))
    catalog = SkillCatalog(registry, McpServerRegistry())
    for s in range(SKILLS):
        deps = [f"t_{s * DEPS + d:04d}" for d in range(DEPS)]
        front = Frontmatter.model_validate(
            {"name": f"skill-{s:03d}", "description": f"Skill {s}.", "tool_dependencies": deps}
        )
        catalog.add(SkillSpec.from_skill(Skill(frontmatter=front, instructions=f"Do {s}.")))
    records = [
        ResourceRecord(
            kind=ResourceKind.SKILL, id=spec.name, creator_id="x", share=ShareConfig.public()
        )
        for spec in catalog.all()
    ]
    return registry, catalog, Principal.from_records(User(id=USER), records)


CONFIG = AgentConfig(
    name=AGENT, tools=tuple(f"t_{900 + i:04d}" for i in range(CONFIGURED)), mcps=()
)


def _answer(request: LlmRequest) -> types.Part:
    done = 0  # function responses since the user's message that opened this turn
    for content in reversed(request.contents):
        if content.role == "user" and any(p.text for p in content.parts or []):
            break
        done += sum(1 for p in content.parts or [] if p.function_response)
    if done >= CALLS:
        return types.Part(text="done")
    # Alternate between a configured tool and a tool opened by an active skill.
    return call("t_0900" if done % 2 else "t_0001", value=done)


class _Player(BaseLlm):
    """Answers like the script, without `ScriptedLlm`'s deep copy of every request: that
    copy grows with the request (the skill catalog) and would be billed to gating."""

    model: str = "bench-player"
    calls: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=0, candidates_token_count=0, total_token_count=0
        )
        part = _answer(llm_request)
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def _runner_for(make_app: Callable[[BaseLlm], App], turns: int) -> Callable[[], Awaitable[int]]:
    async def run() -> int:
        llm = _Player()
        app = make_app(llm)
        service = InMemorySessionService()
        runner = Runner(app=app, session_service=service)
        session = await service.create_session(app_name=app.name, user_id=USER, state=STATE)
        message = types.Content(role="user", parts=[types.Part(text="go")])
        for _ in range(turns):
            async for _event in runner.run_async(
                user_id=USER, session_id=session.id, new_message=message
            ):
                pass
        await runner.close()
        assert llm.calls == (CALLS + 1) * turns, "every turn must make the same calls"
        return llm.calls

    return run


async def _repository(path: str, catalog: SkillCatalog) -> AccessRepository:
    """The bench user, the agent and every skill, shared with everyone."""
    repo = AccessRepository(f"sqlite+aiosqlite:///{path}")
    await repo.prepare()
    await repo.save_user(User(id=USER))
    resources = [(ResourceKind.AGENT, AGENT)] + [
        (ResourceKind.SKILL, s.name) for s in catalog.all()
    ]
    for kind, ident in resources:
        await repo.save_resource(
            ResourceRecord(kind=kind, id=ident, creator_id=USER, share=ShareConfig.public())
        )
    return repo


async def measure(turns: int, rounds: int) -> dict[str, float]:
    registry, catalog, principal = _world()
    visible_names = [f"t_{900 + i:04d}" for i in range(CONFIGURED)] + [
        f"t_{d:04d}" for d in range(ACTIVE * DEPS)
    ]
    visible = registry.tools(visible_names)
    with tempfile.TemporaryDirectory() as tmp:
        repo = await _repository(os.path.join(tmp, "access.db"), catalog)
        loaded = await repo.load_principal(USER)
        assert loaded.usable(ResourceKind.SKILL) == principal.usable(ResourceKind.SKILL)

        async def source(user_id: str) -> Principal:
            return principal

        def plain(llm: BaseLlm) -> App:
            return App(name=AGENT, root_agent=LlmAgent(name=AGENT, model=llm, tools=visible))

        def yuxi(llm: BaseLlm) -> App:
            return build_app(
                CONFIG, principal, model=llm, toolbox=Toolbox(registry=registry, skills=catalog)
            )

        def yuxi_sql(llm: BaseLlm) -> App:
            return build_app(
                CONFIG,
                Access.live(principal, repo),
                model=llm,
                toolbox=Toolbox(registry=registry, skills=catalog),
            )

        def per_user(llm: BaseLlm) -> App:
            return build_app(
                CONFIG, source, model=llm, toolbox=Toolbox(registry=registry, skills=catalog)
            )

        def per_user_sql(llm: BaseLlm) -> App:
            return build_app(
                CONFIG, repo, model=llm, toolbox=Toolbox(registry=registry, skills=catalog)
            )

        contenders = {
            "plain ADK agent (anchor)": _runner_for(plain, turns),
            "Yuxi runtime": _runner_for(yuxi, turns),
            "Yuxi runtime + SQLite revocation": _runner_for(yuxi_sql, turns),
            "Yuxi per-user source (cached runtime)": _runner_for(per_user, turns),
            "Yuxi per-user, SQLite principal + revocation": _runner_for(per_user_sql, turns),
        }
        await timed_rounds(contenders, 1)  # warm-up
        samples = await timed_rounds(contenders, rounds)
        await repo.close()
    return {name: median_rate(values) for name, values in samples.items()}


async def decision_cost(iterations: int = 5000) -> dict[str, float]:
    """Seconds per gating decision alone, without ADK: the visible set a model step is
    declared from, and the checks a tool call passes (visibility, identity, arguments)."""
    registry, catalog, principal = _world()
    app = build_app(
        CONFIG, principal, model=_Player(), toolbox=Toolbox(registry=registry, skills=catalog)
    )
    plugin = app.plugins[0]
    assert isinstance(plugin, AuthorizationPlugin)
    runtime = plugin.cache.get(principal).root
    guard, context = runtime.guard, runtime.context
    activated = STATE[f"_adk_activated_skill_{AGENT}"]
    tool = registry.get("t_0001")
    start = time.perf_counter()
    for _ in range(iterations):
        compute_visibility(context, activated)
    per_step = (time.perf_counter() - start) / iterations
    start = time.perf_counter()
    for _ in range(iterations):
        assert runtime.permits(tool, compute_visibility(context, activated))
        await guard.check_call("t_0001", {"value": 1})
    per_call = (time.perf_counter() - start) / iterations
    return {"visible set per model step": per_step, "checks per tool call": per_call}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer turns and rounds")
    args = parser.parse_args(argv)
    turns, rounds = (5, 3) if args.quick else (args.turns, args.rounds)
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    result = asyncio.run(measure(turns, rounds))
    anchor = result["plain ADK agent (anchor)"]
    rows = [
        [name, f"{s * 1e6:,.0f}", f"{(s - anchor) * 1e6:+,.0f}", f"{s / anchor:.3f}"]
        for name, s in result.items()
    ]
    print(
        f"Per model call, {TOOLS} tools / {SKILLS} skills registered, {len(CONFIG.tools or ())}"
        f" + {ACTIVE * DEPS} visible tools, {turns} turns x {rounds} rounds (median)"
    )
    print(format_table(["agent", "µs per model call", "µs vs anchor", "ratio"], rows))
    decisions = asyncio.run(decision_cost())
    print("\nGating decisions alone (no ADK, no SQL):")
    print(
        format_table(
            ["decision", "µs"], [[name, f"{s * 1e6:.1f}"] for name, s in decisions.items()]
        )
    )


if __name__ == "__main__":
    main()
