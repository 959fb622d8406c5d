"""One App and one Runner serving several users, each run with its own user's rights."""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_yuxi.access import (
    AccessDenied,
    NotFoundError,
    Principal,
    ResourceKind,
    ResourceRecord,
    ShareConfig,
    User,
)
from adk_yuxi.models._request import declared_tool_names
from adk_yuxi.runtime import AgentConfig, AuthorizationPlugin, Refusal, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import tool

from ._kit import Kit, function_responses

CONFIG = AgentConfig(
    name="helper", tools=("echo", "read_kb", "rendezvous", "wait_forever"), preload_skills=()
)


class Directory:
    """A principal source over a dict that tests edit between runs; counts lookups."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.principals: dict[str, Principal] = {}
        self.asked: Counter[str] = Counter()

    def grant(
        self, user_id: str, *, skills: tuple[str, ...] = (), kbs: tuple[str, ...] = ()
    ) -> None:
        records = [
            ResourceRecord(kind=kind, id=ident, creator_id="x", share=ShareConfig.public())
            for kind, idents in ((ResourceKind.SKILL, skills), (ResourceKind.KNOWLEDGE_BASE, kbs))
            for ident in idents
        ]
        self.principals[user_id] = Principal.from_records(User(id=user_id), records)

    async def __call__(self, user_id: str) -> Principal:
        self.asked[user_id] += 1
        try:
            return self.principals[user_id]
        except KeyError:
            raise NotFoundError("user", user_id) from None


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    kit.skill("reporting", tool_dependencies=["make_report"])
    kit.load_skills()
    return kit


@pytest.fixture
def users(kit: Kit) -> Directory:
    directory = Directory(kit)
    directory.grant("alice", skills=("reporting",), kbs=("kb_a",))
    directory.grant("bob", kbs=("kb_b",))
    return directory


def _app(kit: Kit, users: Directory, llm: ScriptedLlm, **kwargs: Any) -> App:
    # Of the helper's tools, those this test registered (a config naming an unknown tool
    # is refused).
    tools = tuple(t for t in CONFIG.tools or () if t in kit.registry)
    return build_app(
        CONFIG.model_copy(update={"tools": tools, **kwargs.pop("config", {})}),
        users,
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog),
        **kwargs,
    )


def _plugin(app: App) -> AuthorizationPlugin:
    plugin = app.plugins[0]
    assert isinstance(plugin, AuthorizationPlugin)
    return plugin


async def _run(runner: Runner, user: str, text: str, session_id: str = "s") -> list[Event]:
    sessions = runner.session_service
    found = await sessions.get_session(
        app_name=runner.app_name, user_id=user, session_id=session_id
    )
    if found is None:
        await sessions.create_session(app_name=runner.app_name, user_id=user, session_id=session_id)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [
        e async for e in runner.run_async(user_id=user, session_id=session_id, new_message=message)
    ]


async def test_two_users_through_one_runner_see_their_own_tools(kit: Kit, users: Directory) -> None:
    llm = ScriptedLlm(["hi alice", "hi bob", "hi again"])
    app = _app(kit, users, llm, config={"preload_skills": ("reporting",)})
    runner = Runner(app=app, session_service=InMemorySessionService())
    await _run(runner, "alice", "hello")
    await _run(runner, "bob", "hello")
    await _run(runner, "alice", "hello again")
    await runner.close()

    alice, bob = set(llm.tool_names(0)), set(llm.tool_names(1))
    assert {"make_report", "load_skill", "echo"} <= alice
    assert "echo" in bob and not {"make_report", "load_skill"} & bob
    assert set(llm.tool_names(2)) == alice
    plugin = _plugin(app)
    assert plugin.bindings.running == 0
    assert plugin.cache.assembled == 2  # alice's second run reused her runtime
    # but her rights were asked again: once per model step (a run's start and its first
    # step share one read)
    assert users.asked == {"alice": 2, "bob": 1}


def _user_and_progress(request: LlmRequest) -> tuple[str, int]:
    """Who sent the message that opened this turn, and how many tool results followed."""
    done = 0
    for content in reversed(request.contents):
        texts = [p.text for p in content.parts or [] if p.text]
        if content.role == "user" and texts:
            return texts[0].removeprefix("I am "), done
        done += sum(1 for p in content.parts or [] if p.function_response)
    raise AssertionError("no user message in the request")


async def test_concurrent_runs_of_two_users_keep_their_contexts_apart(
    kit: Kit, users: Directory
) -> None:
    barrier = asyncio.Barrier(2)

    @tool(registry=kit.registry)
    async def rendezvous() -> dict[str, Any]:
        """Returns once both runs are inside it, so they are in flight together."""
        await barrier.wait()
        return {"met": True}

    seen: dict[str, list[set[str]]] = {"alice": [], "bob": []}

    def play(request: LlmRequest) -> Any:
        user, done = _user_and_progress(request)
        seen[user].append(set(declared_tool_names(request)))
        steps = [call("rendezvous"), call("make_report", title=user), call("read_kb", kb_id="kb_a")]
        return steps[done] if done < len(steps) else f"done for {user}"

    llm = ScriptedLlm([play] * 8)
    app = _app(kit, users, llm, config={"preload_skills": ("reporting",)})
    runner = Runner(app=app, session_service=InMemorySessionService())
    async with asyncio.timeout(60):  # a hang guard only: the barrier needs both runs
        alice, bob = await asyncio.gather(
            _run(runner, "alice", "I am alice"), _run(runner, "bob", "I am bob")
        )
    await runner.close()

    assert all("make_report" in tools for tools in seen["alice"])
    assert not any("make_report" in tools for tools in seen["bob"])
    assert len(seen["alice"]) == len(seen["bob"]) == 4
    assert kit.ran["make_report"] == 1 and kit.ran["read_kb"] == 1  # alice's only
    assert function_responses(alice)["read_kb"] == [{"kb": "kb_a", "text": "contents"}]
    refused = function_responses(bob)
    assert refused["make_report"][0]["error"]["code"] == "tool_not_available"
    assert refused["read_kb"][0]["error"]["code"] == "resource_not_available"
    assert _plugin(app).bindings.running == 0


async def test_changed_rights_show_from_the_next_run_and_equal_rights_are_cached(
    kit: Kit, users: Directory
) -> None:
    llm = ScriptedLlm(["one", "two", "three"])
    app = _app(kit, users, llm, config={"preload_skills": ("reporting",)})
    runner = Runner(app=app, session_service=InMemorySessionService())
    await _run(runner, "bob", "first")
    users.grant("bob", skills=("reporting",), kbs=("kb_b",))  # an administrator shares it
    await _run(runner, "bob", "second")
    users.grant("bob", kbs=("kb_b",))  # and takes it back
    await _run(runner, "bob", "third")
    await runner.close()
    assert "make_report" not in llm.tool_names(0)
    assert "make_report" in llm.tool_names(1)
    assert "make_report" not in llm.tool_names(2)
    assert _plugin(app).cache.assembled == 2  # the third run's principal equals the first's


async def test_the_cache_is_bounded(kit: Kit, users: Directory) -> None:
    users.grant("carol")
    llm = ScriptedLlm(["a", "b", "c", "d"])
    app = _app(kit, users, llm, cache_size=2)
    runner = Runner(app=app, session_service=InMemorySessionService())
    for user in ("alice", "bob", "carol", "alice"):
        await _run(runner, user, "hi")
    await runner.close()
    plugin = _plugin(app)
    assert len(plugin.cache) == 2
    assert plugin.cache.assembled == 4  # alice was evicted by carol, so assembled again


@pytest.mark.parametrize(
    ("user", "reason"),
    [("mallory", "not known"), ("ghost", "disabled"), ("impostor", "another user")],
)
async def test_a_refused_user_never_reaches_the_model(
    kit: Kit, users: Directory, user: str, reason: str
) -> None:
    users.principals["ghost"] = Principal(user=User(id="ghost", active=False))
    users.principals["impostor"] = users.principals["alice"]
    refusals: list[Refusal] = []
    llm = ScriptedLlm([])
    app = _app(kit, users, llm, on_refusal=refusals.append)
    runner = Runner(app=app, session_service=InMemorySessionService())
    events = await _run(runner, user, "hi")
    await runner.close()
    denied = [d for e in events if (d := AccessDenied.from_event(e))]
    assert len(denied) == 1 and denied[0].reason == AccessDenied.PUBLIC_TEXT
    assert events[-1].error_code == AccessDenied.CODE
    assert llm.requests == []
    assert [r.code for r in refusals] == ["access_denied"]
    assert reason in refusals[0].detail  # the cause is for operators only
    assert kit.ran == Counter()
    assert _plugin(app).bindings.running == 0


async def test_a_failing_run_releases_its_binding(kit: Kit, users: Directory) -> None:
    def explode(request: LlmRequest) -> Any:
        raise RuntimeError("the model backend failed")

    app = _app(kit, users, ScriptedLlm([explode]))
    runner = Runner(app=app, session_service=InMemorySessionService())
    with pytest.raises(RuntimeError, match="backend failed"):
        await _run(runner, "alice", "hi")
    await runner.close()
    assert _plugin(app).bindings.running == 0


async def test_a_cancelled_run_releases_its_binding(kit: Kit, users: Directory) -> None:
    entered = asyncio.Event()

    @tool(registry=kit.registry)
    async def wait_forever() -> dict[str, Any]:
        """Blocks until the run is cancelled."""
        entered.set()
        await asyncio.Event().wait()
        return {}

    app = _app(kit, users, ScriptedLlm([call("wait_forever")]))
    runner = Runner(app=app, session_service=InMemorySessionService())
    task = asyncio.create_task(_run(runner, "alice", "hi"))
    await entered.wait()
    bindings = _plugin(app).bindings
    assert bindings.running == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    del task
    # ADK calls neither after_run nor on_run_error for a cancelled run; the binding goes
    # with the invocation context, once ADK's cancelled tasks have unwound (a few loop
    # turns; counted, not timed).
    for _ in range(100):
        gc.collect()
        if bindings.running == 0:
            break
        await asyncio.sleep(0)
    assert bindings.running == 0
    await runner.close()
