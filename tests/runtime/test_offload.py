"""Large tool results stay out of the prompt: through the real Runner, a scripted model
and the SQL services on a real SQLite file, a result above the threshold is saved as a
session artifact, the model's next request holds only its preview, and
`read_tool_result` reads on within the user's own session only."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.genai import types

from adk_yuxi.models import DemoLlm
from adk_yuxi.runtime import AgentConfig, LocalPrincipals, Toolbox, ToolResultOffload, build_app
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import ToolRegistry, tool

APP = "offloader"
READ = "read_tool_result"


def report(size: int) -> dict[str, Any]:
    """A result of about `size` characters of JSON, its end marked."""
    lines = [f"row {i}: 温度 {i % 40} degrees" for i in range(size // 24)]
    return {"title": "Sensor dump", "rows": lines, "end": "END-OF-REPORT"}


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()

    @tool(registry=registry)
    def big_report(size: int) -> dict[str, Any]:
        """A sensor dump of about `size` characters."""
        return report(size)

    @tool(registry=registry)
    def plain_text(size: int) -> str:
        """Plain text of `size` characters."""
        return ("abcdefghij" * (size // 10 + 1))[:size]

    @tool(registry=registry)
    def picture() -> dict[str, Any]:
        """A picture (30 KB of media) and its long caption."""
        image = types.Part.from_bytes(data=bytes(range(256)) * 120, mime_type="image/png")
        return {"caption": "noise " * 4000, "image": image}

    @tool(registry=registry)
    def small() -> dict[str, Any]:
        """A small result."""
        return {"ok": True, "answer": 42}

    return registry


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[YuxiServices]:
    opened = open_services(f"sqlite+aiosqlite:///{tmp_path / 'yuxi.db'}", blob_dir=tmp_path / "b")
    try:
        yield opened
    finally:
        await opened.close()


class World:
    def __init__(self, services: YuxiServices, registry: ToolRegistry) -> None:
        self.services = services
        self.registry = registry

    def runner(self, llm: ScriptedLlm, **config: Any) -> Runner:
        app = build_app(
            AgentConfig(name=APP, **config),
            LocalPrincipals(),
            model=llm,
            toolbox=Toolbox(registry=self.registry),
        )
        return Runner(
            app=app,
            session_service=self.services.session_service,
            artifact_service=self.services.artifact_service,
        )

    async def turn(
        self,
        runner: Runner,
        text: str = "go",
        *,
        user: str = "alice",
        session_id: str | None = None,
    ) -> tuple[str, list[Event]]:
        sessions = self.services.session_service
        if session_id is None:
            session_id = (await sessions.create_session(app_name=APP, user_id=user)).id
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = [
            e
            async for e in runner.run_async(
                user_id=user, session_id=session_id, new_message=message
            )
        ]
        return session_id, events

    async def names(self, session_id: str, user: str = "alice") -> list[str]:
        return await self.services.artifact_service.list_artifact_keys(
            app_name=APP, user_id=user, session_id=session_id
        )


@pytest.fixture
def world(services: YuxiServices, registry: ToolRegistry) -> World:
    return World(services, registry)


def responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.get_function_responses() if r.name == name
    ]


def last_response_part(request: LlmRequest) -> types.FunctionResponse:
    part = request.contents[-1].parts[0]  # type: ignore[index]
    assert part.function_response is not None
    return part.function_response


def last_response(request: LlmRequest) -> dict[str, Any]:
    return dict(last_response_part(request).response or {})


def stored_ref(request: LlmRequest) -> str:
    """The artifact of the first stored result the model was shown."""
    for content in request.contents:
        for part in content.parts or ():
            shown = part.function_response.response if part.function_response else None
            if shown and shown.get("stored_result"):
                return str(shown["stored_result"]["artifact"])
    raise AssertionError("no stored result in the request")


def read_on(offset: int | None = None, length: int = 3000) -> Callable[[LlmRequest], types.Part]:
    """A model turn that reads on in the result the model was shown stored."""

    def turn(request: LlmRequest) -> types.Part:
        start = last_response(request)["next_offset"] if offset is None else offset
        return call(READ, artifact=stored_ref(request), offset=start, length=length)

    return turn


async def test_a_large_result_is_stored_and_the_model_sees_only_its_preview(world: World) -> None:
    llm = ScriptedLlm([call("big_report", size=60_000), "seen"])
    runner = world.runner(llm)
    sid, events = await world.turn(runner)
    full = json.dumps(report(60_000), ensure_ascii=False)
    (shown,) = responses(events, "big_report")
    ref = shown["stored_result"]["artifact"]
    assert ref.startswith("tool-results/big_report-") and ref.endswith(".json")
    assert shown["stored_result"]["version"] == 0
    assert shown["total_chars"] == len(full)
    assert shown["total_bytes"] == len(full.encode())
    assert shown["preview"] == full[:2000] and shown["next_offset"] == 2000
    assert READ in shown["note"]
    # The event records the artifact (what adk web's Artifacts tab lists) ...
    assert [e.actions.artifact_delta for e in events if e.actions.artifact_delta] == [{ref: 0}]
    assert await world.names(sid) == [ref]
    # ... and the next model request holds the preview, never the result.
    request = llm.requests[1]
    assert last_response(request) == shown
    sent = "".join(c.model_dump_json() for c in request.contents)
    assert "END-OF-REPORT" not in sent and len(sent) < 6_000
    # The artifact holds the result whole; the stored session holds the preview.
    part = await world.services.artifact_service.load_artifact(
        app_name=APP, user_id="alice", session_id=sid, filename=ref
    )
    assert part is not None and part.inline_data is not None
    assert part.inline_data.mime_type == "application/json"
    assert json.loads(part.inline_data.data or b"") == report(60_000)
    stored = await world.services.session_service.get_session(
        app_name=APP, user_id="alice", session_id=sid
    )
    assert stored is not None and "END-OF-REPORT" not in stored.model_dump_json()
    await runner.close()


async def test_read_tool_result_returns_the_requested_slice(world: World) -> None:
    llm = ScriptedLlm(
        [
            call("plain_text", size=50_000),
            read_on(length=3000),
            read_on(offset=49_000, length=8000),
            "done",
        ]
    )
    runner = world.runner(llm)
    _, events = await world.turn(runner)
    text = ("abcdefghij" * 5001)[:50_000]
    (shown,) = responses(events, "plain_text")
    assert shown["stored_result"]["artifact"].endswith(".txt")
    assert shown["preview"] == text[:2000]
    window, tail = responses(events, READ)
    assert window["text"] == text[2000:5000] and window["next_offset"] == 5000
    assert window["offset"] == 2000 and window["total_chars"] == 50_000
    assert tail["text"] == text[49_000:] and tail["next_offset"] is None
    await runner.close()


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"offset": -1}, "offset"),
        ({"offset": 2**60}, "offset"),
        ({"offset": 50_001}, "offset"),  # past the end of this result
        ({"length": 0}, "length"),
        ({"length": 8001}, "length"),
    ],
)
async def test_bad_windows_are_refused_with_the_field(
    world: World, args: dict[str, Any], field: str
) -> None:
    def bad(request: LlmRequest) -> types.Part:
        return call(READ, artifact=stored_ref(request), **args)

    llm = ScriptedLlm([call("plain_text", size=50_000), bad, "done"])
    runner = world.runner(llm)
    _, events = await world.turn(runner)
    (refused,) = responses(events, READ)
    assert refused["error"]["code"] == "invalid_arguments"
    assert [p["field"] for p in refused["error"]["problems"]] == [field]
    await runner.close()


async def test_another_sessions_or_users_reference_is_refused(world: World) -> None:
    llm = ScriptedLlm([call("big_report", size=40_000), "stored"])
    runner = world.runner(llm)
    first, events = await world.turn(runner)
    ref = responses(events, "big_report")[0]["stored_result"]["artifact"]
    for user in ("alice", "bob"):  # alice's other session, and bob
        llm.extend([call(READ, artifact=ref), "no"])
        sid, events = await world.turn(runner, user=user)
        (refused,) = responses(events, READ)
        assert refused["error"]["code"] == "resource_not_available"
        assert refused["error"]["argument"] == "artifact"
        assert "row 1:" not in json.dumps(refused)  # nothing of the result leaks
        assert await world.names(sid, user) == []
    # In its own session the same reference reads.
    llm.extend([call(READ, artifact=ref, length=100), "yes"])
    _, events = await world.turn(runner, session_id=first)
    assert responses(events, READ)[0]["total_chars"] > 40_000
    await runner.close()


@pytest.mark.parametrize(
    "name",
    [
        "../tool-results/x.json",
        "tool-results/../secret.json",
        "tool-results/a/b.json",
        "/etc/passwd",
        "user:tool-results/x.json",
        "tool-results/x.txt\x00",
        "tool-results/x.exe",
        "report.md",
    ],
)
async def test_names_that_are_not_stored_results_are_refused(world: World, name: str) -> None:
    llm = ScriptedLlm([call(READ, artifact=name), "ok"])
    runner = world.runner(llm)
    sid, events = await world.turn(runner)
    (refused,) = responses(events, READ)
    assert refused["error"]["code"] == "invalid_arguments"
    assert refused["error"]["problems"][0]["field"] == "artifact"
    assert not [e for e in events if e.actions.artifact_delta]
    assert await world.names(sid) == []
    await runner.close()


async def test_small_results_are_untouched(world: World) -> None:
    llm = ScriptedLlm([call("small"), call("plain_text", size=16 * 1024 - 20), "done"])
    runner = world.runner(llm)
    sid, events = await world.turn(runner)
    assert responses(events, "small") == [{"ok": True, "answer": 42}]
    (text,) = responses(events, "plain_text")
    assert len(text["result"]) == 16 * 1024 - 20  # under the threshold: whole
    assert not [e for e in events if e.actions.artifact_delta]
    assert await world.names(sid) == []
    await runner.close()


@pytest.mark.parametrize(
    "config",
    [
        {"offload_tool_results": None},
        {"offload_tool_results": ToolResultOffload(exempt_tools=("big_report",))},
    ],
)
async def test_offloading_off_or_exempt_keeps_the_result_whole(
    world: World, config: dict[str, Any]
) -> None:
    llm = ScriptedLlm([call("big_report", size=40_000), "done"])
    runner = world.runner(llm, **config)
    sid, events = await world.turn(runner)
    assert responses(events, "big_report") == [report(40_000)]
    assert await world.names(sid) == []
    await runner.close()


async def test_a_lower_threshold_and_preview_apply(world: World) -> None:
    policy = ToolResultOffload(max_inline_bytes=2048, preview_chars=100)
    llm = ScriptedLlm([call("plain_text", size=3000), "done"])
    runner = world.runner(llm, offload_tool_results=policy)
    _, events = await world.turn(runner)
    (shown,) = responses(events, "plain_text")
    assert len(shown["preview"]) == 100 and shown["total_chars"] == 3000
    await runner.close()


async def test_without_an_artifact_service_the_prompt_is_still_bounded(world: World) -> None:
    llm = ScriptedLlm([call("plain_text", size=40_000), "done"])
    app = build_app(
        AgentConfig(name=APP),
        LocalPrincipals(),
        model=llm,
        toolbox=Toolbox(registry=world.registry),
    )
    runner = Runner(app=app, session_service=world.services.session_service)
    _, events = await world.turn(runner)
    (shown,) = responses(events, "plain_text")
    assert shown["stored_result"] is None and len(shown["preview"]) == 2000
    assert "could not be stored" in shown["note"]
    await runner.close()


async def test_a_result_carrying_media_is_left_to_adk(world: World) -> None:
    """ADK hands media to the model as parts, not as text: nothing to offload."""
    llm = ScriptedLlm([call("picture"), "a picture"])
    runner = world.runner(llm)
    sid, _ = await world.turn(runner)
    sent = last_response_part(llm.requests[1])
    assert sent.response == {"caption": "noise " * 4000}
    assert [p.inline_data.mime_type for p in sent.parts or [] if p.inline_data] == ["image/png"]
    assert await world.names(sid) == []
    await runner.close()


async def test_the_demo_model_reads_on_when_asked(world: World) -> None:
    """Offline, on the demo model: a stored result, then "read more" twice."""
    app = build_app(
        AgentConfig(name=APP),
        LocalPrincipals(),
        model=DemoLlm(),
        toolbox=Toolbox(registry=world.registry),
    )
    runner = Runner(
        app=app,
        session_service=world.services.session_service,
        artifact_service=world.services.artifact_service,
    )
    sid, events = await world.turn(runner, text='/call plain_text {"size": 20000}')
    (shown,) = responses(events, "plain_text")
    assert shown["next_offset"] == 2000
    _, events = await world.turn(runner, text="read more", session_id=sid)
    (window,) = responses(events, READ)
    assert window["offset"] == 2000 and window["next_offset"] == 6000
    _, events = await world.turn(runner, text="read more", session_id=sid)
    assert responses(events, READ)[0]["offset"] == 6000
    await runner.close()


async def test_a_text_part_is_not_media_and_the_result_is_offloaded(
    world: World, registry: ToolRegistry
) -> None:
    @tool(registry=registry)
    def captioned() -> dict[str, Any]:
        """A long result holding a text part."""
        return {"body": types.Part(text="words " * 20_000), "end": "END-OF-REPORT"}

    llm = ScriptedLlm([call("captioned"), "done"])
    runner = world.runner(llm)
    sid, events = await world.turn(runner)
    (shown,) = responses(events, "captioned")
    assert shown["stored_result"]["artifact"].startswith("tool-results/captioned-")
    sent = "".join(c.model_dump_json() for c in llm.requests[1].contents)
    assert "END-OF-REPORT" not in sent and len(sent) < 6_000
    assert len(await world.names(sid)) == 1
    await runner.close()


@pytest.mark.parametrize(
    "name", ["load_skill", "set_model_response", "ask_user_question", "web_fetch", "web_search"]
)
async def test_a_deployers_tool_with_a_platform_name_is_offloaded(world: World, name: str) -> None:
    """Exemptions go by what a tool is: the deployer's own `web_fetch` is offloaded."""
    registry = ToolRegistry()

    def impostor() -> dict[str, Any]:
        """A large result under a platform tool's name."""
        return report(100_000)

    impostor.__name__ = name
    tool(registry=registry)(impostor)
    llm = ScriptedLlm([call(name), "done"])
    runner = World(world.services, registry).runner(llm, tools=(name,))
    _, events = await world.turn(runner)
    (shown,) = responses(events, name)
    assert shown["stored_result"]["artifact"].startswith(f"tool-results/{name}-")
    sent = "".join(c.model_dump_json() for c in llm.requests[1].contents)
    assert "END-OF-REPORT" not in sent and len(sent) < 6_000
    await runner.close()
