"""The pieces of `bench_entry_points`: a scripted player that reports its prompt size (as
hosted models do) or reports none, and one turn through each entry point.

Every entry point runs the same `build_app` App at its defaults (context policy,
offload, authorization, the run ledger) with the player as model and summarizer:

- `runner`: a user's `Runner(app=..., session_service=SqlSessionService)` and
  `run_async` with no run config;
- `adk_cli`: the services ADK's CLIs build from `--session_service_uri yuxi+sqlite:///…`
  (`create_*_service_from_options`, after `services.py` registered the schemes) and the
  `Runner` as `adk run` constructs it;
- `host`: the host API (`create_app(ApiConfig(...))`) in-process over ASGI, a run
  posted and its stream read to the end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.auth.credential_service.in_memory_credential_service import (
    InMemoryCredentialService,
)
from google.adk.cli.utils.service_factory import (
    create_artifact_service_from_options,
    create_memory_service_from_options,
    create_session_service_from_options,
)
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from adk_yuxi.access import (
    AccessRepository,
    Principal,
    ResourceKind,
    ResourceRecord,
    ShareConfig,
    User,
)
from adk_yuxi.apikeys import ApiKeyStore
from adk_yuxi.host import ApiConfig, create_app
from adk_yuxi.runtime import (
    DEFAULT_COMPACT_AT_EVENTS,
    AgentConfig,
    ContextPolicy,
    RunRecords,
    Toolbox,
    build_app,
)
from adk_yuxi.runtime.assembly._deferred_compaction import OVER_BUDGET_KEY, events_since_summary
from adk_yuxi.storage import open_services, register_service_schemes
from adk_yuxi.tools import ToolRegistry, tool
from bench._history import seed_sql

__all__ = [
    "AGENT",
    "USER",
    "Player",
    "Turn",
    "entry_point",
    "plain_turns",
    "yuxi_in_memory",
]

AGENT, USER = "bench", "u"
MESSAGE = types.Content(role="user", parts=[types.Part(text="what do we know?")])
TOOLS_TOKENS = 300
"""What a hosted model would count for the instruction's tool declarations."""


def lookup(topic: str) -> dict[str, Any]:
    """Looks a topic up."""
    return {"topic": topic, "facts": ["a fact of modest length about the topic"] * 3}


class Player(BaseLlm):
    """Calls `lookup` once, then answers; a request without tools (the summarizer's) gets
    a summary. `report`: the prompt size as a hosted model counts it (a token per four
    characters, tool declarations included), else no usage at all. Light on purpose: no
    copy of the request, whose cost would grow with the history and be billed to it."""

    model: str = "bench-player"
    report: bool = True

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        answered = bool(last and last.parts and last.parts[0].function_response)
        if not llm_request.tools_dict:
            part = types.Part(text="Summary: the user asked about topics; lookups answered.")
        elif answered:
            part = types.Part(text="done: the facts, summed up in a sentence or two.")
        else:
            part = types.Part(function_call=types.FunctionCall(name="lookup", args={"topic": "q"}))
        usage = None
        if self.report:
            chars = sum(
                len(p.text or "") + (60 if p.function_call or p.function_response else 0)
                for c in llm_request.contents
                for p in c.parts or ()
            )
            usage = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=chars // 4 + TOOLS_TOKENS
            )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


Timing = tuple[float, float, float]
"""Wall seconds to the answer and to the end of the run, and the process's CPU seconds."""


class Turn:
    """One entry point: `new_session()` (untimed), `run(session)` (one turn, timed),
    `seed(session, events)`, `settle(session)` (waits for a compaction started after a
    run, so that no timed turn is billed for it)."""

    def __init__(
        self,
        new_session: Callable[[], Awaitable[str]],
        run: Callable[[str], Awaitable[Timing]],
        seed: Callable[[str, list[Any]], Awaitable[None]],
        settle: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.new_session, self.run, self.seed = new_session, run, seed
        self.settle = settle or _nothing


async def _nothing(session_id: str) -> None:
    return None


def _stored_settle(sessions: BaseSessionService) -> Callable[[str], Awaitable[None]]:
    """Waits (30 s at most) until no compaction is pending (`_compaction_pending`): its
    summary has landed, or there was nothing to compact."""

    async def settle(session_id: str) -> None:
        for _ in range(300):
            session = await sessions.get_session(
                app_name=AGENT, user_id=USER, session_id=session_id
            )
            if session is None or not _compaction_pending(session.events):
                return
            await asyncio.sleep(0.1)

    return settle


def _compaction_pending(events: list[Any]) -> bool:
    """A run's answer marked over budget, or the policy's event count, since the latest
    summary: the compaction after that run has not landed yet."""
    if events_since_summary(events) >= DEFAULT_COMPACT_AT_EVENTS:
        return True
    for event in reversed(events):
        if event.actions and event.actions.compaction:
            return False
        if (event.custom_metadata or {}).get(OVER_BUDGET_KEY):
            return True
    return False


def _app(player: Player, records: Any = None, context: ContextPolicy | None = None) -> App:
    registry = ToolRegistry()
    tool(registry=registry)(lookup)
    record = ResourceRecord(
        kind=ResourceKind.AGENT, id=AGENT, creator_id="x", share=ShareConfig.public()
    )
    return build_app(
        AgentConfig(name=AGENT, tools=("lookup",), context=context or ContextPolicy()),
        Principal.from_records(User(id=USER), [record]),
        model=player,
        name=AGENT,
        toolbox=Toolbox(registry=registry),
        capabilities=[RunRecords(records)] if records is not None else [],
    )


async def _timed(events: Any) -> Timing:
    start, cpu = time.perf_counter(), time.process_time()
    answer = 0.0
    async for event in events:
        if not answer and event.author == AGENT and event.is_final_response():
            answer = time.perf_counter() - start
    return answer, time.perf_counter() - start, time.process_time() - cpu


def _runner_turn(
    runner: Runner, sessions: BaseSessionService, seed: Any, *, compacts: bool = True
) -> Turn:
    async def new_session() -> str:
        return (await sessions.create_session(app_name=AGENT, user_id=USER)).id

    async def run(session_id: str) -> Timing:
        events = runner.run_async(user_id=USER, session_id=session_id, new_message=MESSAGE)
        return await _timed(events)

    return Turn(new_session, run, seed, _stored_settle(sessions) if compacts else None)


async def entry_point(
    name: str,
    work: Path,
    player: Player,
    stack: AsyncExitStack,
    context: ContextPolicy | None = None,
) -> Turn:
    """The turn of entry point `name` (`runner`, `adk_cli`, `host`) on SQLite in `work`
    (an existing directory); `context`: the agent's policy (`runner` only; default: the
    default policy)."""
    url = f"sqlite+aiosqlite:///{work / 'yuxi.db'}"
    services = open_services(url)
    stack.push_async_callback(services.close)

    async def seed(session_id: str, events: list[Any]) -> None:
        await seed_sql(services, AGENT, USER, session_id, events)
        # One full read, untimed: it proves the rows for the fast decoder, as the turns
        # of a conversation that grew through the service have.
        await services.session_service.get_session(
            app_name=AGENT, user_id=USER, session_id=session_id
        )

    if name == "runner":
        runner = Runner(
            app=_app(player, services.store, context), session_service=services.session_service
        )
        stack.push_async_callback(runner.close)  # waits for compactions in flight
        return _runner_turn(runner, services.session_service, seed)
    if name == "adk_cli":
        register_service_schemes()  # what the agent folder's services.py does
        uri = f"yuxi+sqlite:///{work / 'yuxi.db'}"
        sessions = create_session_service_from_options(base_dir=work, session_service_uri=uri)
        runner = Runner(
            app=_app(player, services.store),
            session_service=sessions,
            artifact_service=create_artifact_service_from_options(
                base_dir=work, artifact_service_uri=uri
            ),
            memory_service=create_memory_service_from_options(
                base_dir=work, memory_service_uri=uri
            ),
            credential_service=InMemoryCredentialService(),
        )
        stack.push_async_callback(runner.close)
        return _runner_turn(runner, sessions, seed)
    return await _host_turn(work, url, player, services, stack, seed)


async def _host_turn(
    work: Path, url: str, player: Player, services: Any, stack: AsyncExitStack, seed: Any
) -> Turn:
    access = AccessRepository(services.store)
    await access.save_user(User(id=USER))
    await access.save_resource(
        ResourceRecord(
            kind=ResourceKind.AGENT, id=AGENT, creator_id=USER, share=ShareConfig.public()
        )
    )
    token = (await ApiKeyStore(services.store).issue(USER, issued_by=USER)).token
    registry = ToolRegistry()
    tool(registry=registry)(lookup)
    config = ApiConfig(
        database_url=url,
        agents=(AgentConfig(name=AGENT, tools=("lookup",)),),
        workspace_root=work / "workspaces",
        model=player,
        worker="bench",
        toolbox=Toolbox(registry=registry),
    )
    app = create_app(config)
    await stack.enter_async_context(app.router.lifespan_context(app))
    transport = httpx.ASGITransport(app=app)
    client = await stack.enter_async_context(
        httpx.AsyncClient(transport=transport, base_url="http://api", timeout=600)
    )
    headers = {"Authorization": f"Bearer {token}"}

    async def new_session() -> str:
        created = await client.post(f"/v1/agents/{AGENT}/sessions", headers=headers)
        assert created.status_code == 201, created.text
        return str(created.json()["id"])

    async def run(session_id: str) -> Timing:
        start, cpu = time.perf_counter(), time.process_time()
        answer = 0.0
        path = f"/v1/agents/{AGENT}/sessions/{session_id}/runs"
        async with client.stream(
            "POST", path, json={"text": "what do we know?"}, headers=headers
        ) as r:
            assert r.status_code == 200
            async for line in r.aiter_lines():
                if not answer and "done: the facts" in line:
                    answer = time.perf_counter() - start
        return answer, time.perf_counter() - start, time.process_time() - cpu

    return Turn(new_session, run, seed, _stored_settle(services.session_service))


def _memory_seed(sessions: InMemorySessionService) -> Callable[[str, list[Any]], Awaitable[None]]:
    async def seed(session_id: str, events: list[Any]) -> None:
        session = await sessions.get_session(app_name=AGENT, user_id=USER, session_id=session_id)
        assert session is not None
        for event in events:
            await sessions.append_event(session, event)

    return seed


def plain_turns(player: Player) -> Turn:
    """Plain ADK in memory: an `LlmAgent` with a `FunctionTool`, no compaction."""
    agent = LlmAgent(name=AGENT, model=player, tools=[FunctionTool(lookup)])
    sessions = InMemorySessionService()
    runner = Runner(app=App(name=AGENT, root_agent=agent), session_service=sessions)
    return _runner_turn(runner, sessions, _memory_seed(sessions), compacts=False)


def yuxi_in_memory(player: Player) -> Turn:
    """The same App on ADK's in-memory sessions, no ledger: the runtime's own cost."""
    sessions = InMemorySessionService()
    return _runner_turn(
        Runner(app=_app(player), session_service=sessions), sessions, _memory_seed(sessions)
    )
