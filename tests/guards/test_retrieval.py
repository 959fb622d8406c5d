"""Per-step tool retrieval through the real Runner: what the model is shown, and that
retrieval never shows or runs more than the gates allow."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from google.adk.tools.base_tool import BaseTool

from adk_yuxi.guards import ToolRetrievalPlugin
from adk_yuxi.runtime import SKILL_LOADER_TOOLS, AgentConfig, Toolbox, ToolRetrieval, build_app
from adk_yuxi.testing import ScriptedLlm, call
from tests.runtime._kit import Kit

from ._kit import TOOLS, app_for, guard_kit, responses, turn

RETRIEVAL = ToolRetrieval(top_k=2, pinned=("echo",))


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return guard_kit(tmp_path)


async def test_each_step_declares_always_on_plus_top_k(kit: Kit) -> None:
    llm = ScriptedLlm([call("get_weather", city="杭州"), "晴天。"])
    events = await turn(app_for(kit, llm, tool_retrieval=RETRIEVAL), "杭州今天天气怎么样？")

    declared = set(llm.tool_names(0))
    assert "get_weather" in declared
    assert "echo" in declared  # pinned
    assert SKILL_LOADER_TOOLS.intersection(declared)  # the skill loader is always on
    retrieved = declared - {"echo"} - SKILL_LOADER_TOOLS
    assert len(retrieved) <= 2
    assert "send_email" not in declared and "ping" not in declared
    assert kit.ran["get_weather"] == 1
    assert responses(events)[0] == ("get_weather", {"city": "杭州", "weather": "sunny"})


async def test_english_query_retrieves_other_tools(kit: Kit) -> None:
    llm = ScriptedLlm(["ok"])
    await turn(app_for(kit, llm, tool_retrieval=RETRIEVAL), "convert 10 dollars to euros")
    declared = set(llm.tool_names(0))
    assert "convert_currency" in declared
    assert "get_weather" not in declared


async def test_off_by_default_declares_every_visible_tool(kit: Kit) -> None:
    assert AgentConfig(name="x").tool_retrieval is None
    llm = ScriptedLlm(["ok"])
    await turn(app_for(kit, llm), "杭州今天天气怎么样？")
    assert {"echo", "get_weather", "convert_currency", "send_email", "ping"} <= set(
        llm.tool_names(0)
    )


async def test_hidden_tool_is_never_declared_even_when_it_matches_best(kit: Kit) -> None:
    # make_report is behind the not-yet-loaded reporting skill: the query names it.
    llm = ScriptedLlm([call("make_report", title="Q3"), "done"])
    events = await turn(
        app_for(kit, llm, tool_retrieval=RETRIEVAL), "make_report: writes a report, make report"
    )
    assert "make_report" not in llm.tool_names(0)
    assert kit.ran["make_report"] == 0
    [(name, result)] = responses(events)
    assert name == "make_report"
    assert result["error"]["code"] == "tool_not_available"


async def test_visible_but_not_retrieved_tool_may_be_called(kit: Kit) -> None:
    """Decision: retrieval narrows what is declared, not what is executable. A visible
    tool the model names anyway (from an earlier step, say) runs under the same checks."""
    llm = ScriptedLlm([call("send_email", to="bob", subject="hi"), "sent"])
    events = await turn(app_for(kit, llm, tool_retrieval=RETRIEVAL), "杭州今天天气怎么样？")
    assert "send_email" not in llm.tool_names(0)
    assert kit.ran["send_email"] == 1
    assert responses(events)[0] == ("send_email", {"sent": True})


async def test_admin_only_tool_stays_out_for_a_user_whatever_retrieval_says(kit: Kit) -> None:
    llm = ScriptedLlm([call("drop_tables"), "no"])
    retrieval = ToolRetrieval(top_k=3, pinned=("drop_tables",))
    app = app_for(kit, llm, tool_retrieval=retrieval, tools=(*TOOLS, "drop_tables"))
    events = await turn(app, "drop the tables")
    assert "drop_tables" not in llm.tool_names(0)
    assert kit.ran["drop_tables"] == 0
    assert responses(events)[0][1]["error"]["code"] == "tool_not_available"


async def test_a_failing_retriever_leaves_the_declarations_whole(kit: Kit) -> None:
    class Broken:
        def retrieve(self, query: str, candidates: object, k: int) -> list[str]:
            raise RuntimeError("index unavailable")

    declared = {name: BaseTool(name=name, description="") for name in "abc"}
    plugin = ToolRetrievalPlugin(Broken(), top_k=1)
    assert plugin.select("weather please", declared) is None
    assert plugin.select("", declared) is None
    with pytest.raises(ValueError):
        ToolRetrievalPlugin(Broken(), top_k=0)


async def test_declarations_are_pruned_by_name_when_positions_do_not_line_up(kit: Kit) -> None:
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    from adk_yuxi.guards import BM25ToolRetriever

    request = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text="weather in 杭州")])]
    )
    for names in (("echo", "get_weather"), ("echo",), ("send_email", "ping")):
        # The second "echo" shadows the first: one more declaration than tools_dict entries.
        request.append_tools([kit.registry.get(n) for n in names])
    plugin = ToolRetrievalPlugin(BM25ToolRetriever(kit.registry), top_k=1, always=("ping",))
    await plugin.before_model_callback(callback_context=None, llm_request=request)  # type: ignore[arg-type]
    [tool] = request.config.tools or []
    assert [d.name for d in tool.function_declarations or []] == ["get_weather", "ping"]


def test_per_run_tables_stay_bounded() -> None:
    from adk_yuxi.guards._budget import RUNS_KEPT, RepairBudget

    class Ctx:
        def __init__(self, invocation_id: str) -> None:
            self.invocation_id = invocation_id

    budget = RepairBudget(1)
    for i in range(RUNS_KEPT + 10):
        budget.charge(Ctx(f"inv-{i}"), "x")  # type: ignore[arg-type]
    assert budget.spent("inv-0") == 0
    assert budget.spent(f"inv-{RUNS_KEPT + 9}") == 1


async def test_a_custom_retriever_plugs_into_build_app(kit: Kit) -> None:
    """The interface an embedding retriever implements: it ranks only what it is given."""
    seen: list[set[str]] = []

    class Alphabetical:
        def retrieve(self, query: str, candidates: Mapping[str, BaseTool], k: int) -> list[str]:
            seen.append(set(candidates))
            return [*sorted(candidates)[:k], "make_report", "drop_tables"]

    llm = ScriptedLlm(["ok"])
    agent = AgentConfig(
        name="guarded", tools=TOOLS, skills=("reporting",), tool_retrieval=RETRIEVAL
    )
    app = build_app(
        agent,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog, retriever=Alphabetical()),
    )
    await turn(app, "anything")
    declared = set(llm.tool_names(0))
    assert "make_report" not in seen[0] and "drop_tables" not in seen[0]
    assert "make_report" not in declared and "drop_tables" not in declared
    assert {"convert_currency", "echo"} <= declared


async def test_an_unknown_name_is_answered_with_the_names_declared_this_step(kit: Kit) -> None:
    llm = ScriptedLlm([call("get_wether", city="x"), "ok"])
    events = await turn(app_for(kit, llm, tool_retrieval=RETRIEVAL), "杭州今天天气怎么样？")
    [(_, result)] = responses(events)
    assert result["error"]["code"] == "tool_not_available"
    assert result["error"]["available"] == llm.tool_names(0)
    assert "send_email" not in result["error"]["available"]
