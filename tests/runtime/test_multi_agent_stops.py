"""A stopped turn stops all of it, through the real Runner: a stop on a run above a
nested agent-tool run ends the nested run at its next model or tool call, and a nested
run that starts after its caller was stopped is refused, never run as a new root."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from adk_yuxi.access import AccessDenied
from adk_yuxi.runtime import Limits, Refusal, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import tool

from ._tree_kit import Tools, principal, responses, run, tree_catalog


class Stops:
    """Records refusals; `seen(code)` is set once a stop with that code is recorded."""

    def __init__(self) -> None:
        self.refusals: list[Refusal] = []
        self._events: dict[str, asyncio.Event] = {}

    def seen(self, code: str) -> asyncio.Event:
        return self._events.setdefault(code, asyncio.Event())

    def record(self, refusal: Refusal) -> None:
        self.refusals.append(refusal)
        self.seen(refusal.code).set()

    def codes(self) -> list[str]:
        return [r.code for r in self.refusals]


class Gated(Tools):
    """The tree's tools, `boom`, which raises once `in_flight` is set (so the stop it
    causes lands while a nested run is busy), and `slow`, which is busy until `until`."""

    def __init__(self, until: asyncio.Event) -> None:
        super().__init__()
        self.in_flight = asyncio.Event()
        ran, in_flight = self.ran, self.in_flight

        @tool(registry=self.registry)
        async def boom(n: int) -> dict[str, Any]:
            """Always raises."""
            await asyncio.wait_for(in_flight.wait(), timeout=10)
            ran["boom"] += 1
            raise RuntimeError(f"boom {n}")

        @tool(registry=self.registry)
        async def slow(topic: str) -> dict[str, Any]:
            """Takes its time."""
            in_flight.set()
            await asyncio.wait_for(until.wait(), timeout=10)
            ran["slow"] += 1
            return {"facts": topic}

    def held(self, until: asyncio.Event, turn: Any) -> Any:
        """A model turn in flight (a slow real model) until `until`, then `turn`."""

        async def held(request: LlmRequest) -> Any:
            self.in_flight.set()
            await asyncio.wait_for(until.wait(), timeout=10)
            return turn

        return held


FAIL_TWICE = [call("researcher", request="q"), call("boom", n=1), call("boom", n=2)]


def _app(
    tools: Tools, models: dict[str, ScriptedLlm], stops: Stops, limits: Limits, **kw: Any
) -> Any:
    catalog = tree_catalog(
        coordinator={"tools": ["plan", "boom"], "limits": limits, "sub_agents": ["writer"]},
        researcher={"tools": ["lookup", "slow"], "agent_tools": ["critic"]},
        critic={"tools": ["lookup"]},
    )
    return build_app(
        "coordinator",
        principal("alice"),
        catalog=catalog,
        model=models,
        on_refusal=stops.record,
        toolbox=Toolbox(registry=tools.registry),
        **kw,
    )


@pytest.mark.parametrize("answer", [call("lookup", topic="a"), "researcher finished"])
async def test_an_answer_arriving_after_a_stop_above_is_dropped(answer: Any) -> None:
    """The coordinator's second failing tool ends its turn (TOOL_FAILURES) while the
    researcher's model call is in flight: what that call answers is not used, neither
    the tool call it asks for nor its text as the caller's result."""
    stops = Stops()
    tools = Gated(stops.seen("tool_failures"))
    models = {
        "coordinator": ScriptedLlm([FAIL_TWICE, "never"]),
        "researcher": ScriptedLlm(
            [tools.held(stops.seen("tool_failures"), answer), "researcher finished"]
        ),
    }
    app = _app(tools, models, stops, Limits(max_tool_failures=1))
    events = await run(app, "alice")
    stopped = responses(events, "researcher")[0]["error"]
    assert stopped["code"] == "agent_stopped" and stopped["reason"] == "TOOL_FAILURES"
    assert events[-1].error_code == "TOOL_FAILURES"
    assert tools.ran["lookup"] == 0 and tools.ran["boom"] == 2
    assert len(models["researcher"].requests) == 1
    assert len(models["coordinator"].requests) == 1


async def test_a_stop_above_ends_the_nested_run_at_its_next_model_call() -> None:
    """The stop lands while the researcher's tool runs: the tool's result stands (it
    ran), the researcher's next model call is not made."""
    stops = Stops()
    tools = Gated(stops.seen("tool_failures"))
    models = {
        "coordinator": ScriptedLlm([FAIL_TWICE, "never"]),
        "researcher": ScriptedLlm(
            [call("slow", topic="a")] + [call("lookup", topic="b")] * 5 + ["finished"]
        ),
    }
    app = _app(tools, models, stops, Limits(max_tool_failures=1))
    events = await run(app, "alice")
    assert responses(events, "researcher")[0]["error"]["reason"] == "TOOL_FAILURES"
    assert events[-1].error_code == "TOOL_FAILURES"
    assert tools.ran["slow"] == 1 and tools.ran["lookup"] == 0
    assert len(models["researcher"].requests) == 1


async def test_a_stop_reaches_two_levels_down() -> None:
    """coordinator -> researcher -> critic (an agent tool of the researcher): a stop of
    the coordinator's turn reaches the critic, two runs below it, and the researcher
    between them makes no further call."""
    stops = Stops()
    tools = Gated(stops.seen("tool_failures"))
    models = {
        "coordinator": ScriptedLlm([FAIL_TWICE, "never"]),
        "researcher": ScriptedLlm([call("critic", request="check"), "researcher finished"]),
        "critic": ScriptedLlm(
            [tools.held(stops.seen("tool_failures"), call("lookup", topic="c")), "never"]
        ),
    }
    app = _app(tools, models, stops, Limits(max_tool_failures=1))
    events = await run(app, "alice")
    assert responses(events, "researcher")[0]["error"]["reason"] == "TOOL_FAILURES"
    assert events[-1].error_code == "TOOL_FAILURES"
    assert tools.ran["lookup"] == 0
    assert len(models["researcher"].requests) == 1
    assert len(models["critic"].requests) == 1
    stopped_runs = [r for r in stops.refusals if r.code == "tool_failures" and r.tool is None]
    assert {r.agent for r in stopped_runs} >= {"critic"}


class DelayAgentCalls(BasePlugin):
    """A host plugin that holds every call to the researcher until `event` (`holding`
    is set while it does)."""

    def __init__(self, event: asyncio.Event, holding: asyncio.Event) -> None:
        super().__init__(name="host_delay")
        self.event = event
        self.holding = holding

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if tool.name == "researcher":
            self.holding.set()
            await asyncio.wait_for(self.event.wait(), timeout=10)
        return None


async def test_a_nested_run_starting_after_its_caller_stopped_is_refused() -> None:
    """A host plugin delays the agent call until the coordinator's turn has ended: the
    nested run is refused before any model call, with no budget of its own."""
    stops = Stops()
    tools = Gated(stops.seen("tool_failures"))
    models = {
        "coordinator": ScriptedLlm([FAIL_TWICE, "never"]),
        "researcher": ScriptedLlm([call("lookup", topic="a")] * 6 + ["researcher finished"]),
    }
    app = _app(
        tools,
        models,
        stops,
        Limits(max_tool_failures=1, max_llm_calls=5),
        capabilities=[DelayAgentCalls(stops.seen("tool_failures"), tools.in_flight)],
    )
    events = await run(app, "alice")
    stopped = responses(events, "researcher")[0]["error"]
    assert stopped["code"] == "agent_stopped" and stopped["reason"] == "TOOL_FAILURES"
    assert events[-1].error_code == "TOOL_FAILURES"
    assert models["researcher"].requests == [] and tools.ran["lookup"] == 0
    assert "access_denied" not in stops.codes()


async def test_a_pending_call_whose_caller_is_gone_is_refused() -> None:
    """The agent call is held until after the caller's run was released (its binding
    is gone): the nested run is refused (ACCESS_DENIED), never bound as a new root."""
    tools, stops = Gated(asyncio.Event()), Stops()
    released = asyncio.Event()
    task: dict[str, asyncio.Task[Any]] = {}

    class Leak(BasePlugin):
        """Starts the researcher's call in a task of its own that outlives the turn."""

        def __init__(self) -> None:
            super().__init__(name="host_leak")

        @override
        async def before_tool_callback(
            self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
        ) -> dict[str, Any] | None:
            if tool.name != "researcher":
                return None

            async def later() -> Any:
                await asyncio.wait_for(released.wait(), timeout=10)
                return await tool.run_async(args=tool_args, tool_context=tool_context)

            task["t"] = asyncio.create_task(later())
            return {"result": "left running"}

    models = {
        "coordinator": ScriptedLlm([call("researcher", request="q"), "answered"]),
        "researcher": ScriptedLlm(["researcher finished"]),
    }
    app = _app(tools, models, stops, Limits(), capabilities=[Leak()])
    await run(app, "alice")
    released.set()
    result = await task["t"]
    assert models["researcher"].requests == []
    assert "researcher finished" not in str(result)
    assert AccessDenied.CODE.lower() in stops.codes()
