"""A nested agent tool in one trace: the caller's authorization of the agent tool, the
nested run's binding to its caller under ADK's span of that tool call, and the nested
agent's own decisions under the binding's run."""

from __future__ import annotations

from adk_yuxi.runtime import Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from tests.runtime._tree_kit import Tools, principal, responses, run, tree_catalog

from .conftest import Spans


async def test_a_nested_agent_tool_is_bound_under_its_call(spans: Spans) -> None:
    tools = Tools()
    models = {
        "coordinator": ScriptedLlm([call("researcher", request="cats"), "Cats purr."]),
        "researcher": ScriptedLlm([call("lookup", topic="cats"), call("plan", goal="x"), "ok"]),
    }
    app = build_app(
        "coordinator",
        principal("alice"),
        catalog=tree_catalog(),
        model=models,
        toolbox=Toolbox(registry=tools.registry),
    )
    events = await run(app, "alice")
    assert responses(events, "researcher") == [{"result": "ok"}]

    call_decision = spans.one("yuxi.authorize agent", gen_ai__tool__name="researcher")
    assert call_decision.attributes is not None
    assert call_decision.attributes["yuxi.authz.decision"] == "allowed"
    assert call_decision.attributes["yuxi.authz.rule"] == "agent_tree"
    assert call_decision.attributes["gen_ai.agent.name"] == "coordinator"

    bound = spans.one("yuxi.agent_tool.bind")
    attributes = dict(bound.attributes or {})
    assert attributes["gen_ai.agent.name"] == "researcher"
    assert attributes["yuxi.agent_tool.caller"] == "coordinator"
    assert attributes["yuxi.agent_tool.depth"] == 1
    assert attributes["yuxi.authz.decision"] == "allowed"
    assert attributes["yuxi.run.parent_invocation"] != attributes["yuxi.run.invocation"]
    assert "execute_tool researcher" in spans.ancestors(bound)

    lookup = spans.one("yuxi.authorize tool", gen_ai__tool__name="lookup")
    assert lookup.attributes is not None
    assert lookup.attributes["gen_ai.agent.name"] == "researcher"
    assert lookup.attributes["yuxi.authz.decision"] == "allowed"
    # The coordinator's own tool is not the researcher's: refused in the nested run.
    plan = spans.one("yuxi.authorize tool", gen_ai__tool__name="plan")
    assert plan.attributes is not None
    assert plan.attributes["yuxi.authz.decision"] == "refused"
    assert plan.attributes["yuxi.authz.rule"] == "tool_not_available"
    for nested in (lookup, plan):
        assert "execute_tool researcher" in spans.ancestors(nested)
    assert len({s.context.trace_id for s in spans.all()}) == 1
