"""The embedding retriever on a feature-hashing embedder (terms hashed into 256
dimensions): the interface, candidates only, one embedding of the registry per version."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pytest
from google.adk.tools.base_tool import BaseTool

from adk_yuxi._text import document_terms
from adk_yuxi.guards import EmbeddingToolRetriever, ToolRetrievalPlugin, ToolRetriever
from adk_yuxi.runtime import Toolbox
from adk_yuxi.testing import ScriptedLlm
from tests.runtime._kit import Kit

from ._kit import TOOLS, guard_kit, turn


class HashingEmbedder:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        vectors = []
        for text in texts:
            vector = [0.0] * 256
            for term in document_terms(text):
                vector[int(hashlib.md5(term.encode()).hexdigest(), 16) % 256] += 1.0
            vectors.append(vector)
        return vectors


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return guard_kit(tmp_path)


def test_ranks_among_candidates_and_embeds_the_registry_once_per_version(kit: Kit) -> None:
    embed = HashingEmbedder()
    retriever = EmbeddingToolRetriever(embed, kit.registry)
    assert isinstance(retriever, ToolRetriever)
    candidates = {name: kit.registry.get(name) for name in TOOLS}
    assert retriever.retrieve("杭州天气怎么样", candidates, 1) == ["get_weather"]
    assert retriever.retrieve("convert dollars to euros, exchange rate", candidates, 1) == [
        "convert_currency"
    ]
    hidden = {"make_report": kit.registry.get("make_report")}
    assert "make_report" not in retriever.retrieve("make a report", {**candidates}, 5)
    assert retriever.retrieve("make a report", hidden, 1) == ["make_report"]
    assert retriever.builds == 1
    outsider = BaseTool(name="crm_lookup", description="Finds a customer record in the CRM.")
    for _ in range(3):
        found = retriever.retrieve("customer record", {**candidates, "crm_lookup": outsider}, 1)
        assert found == ["crm_lookup"]
    # The registry once (one batch), the outsider once, and one text per query (7).
    assert embed.calls == [len(kit.registry), *([1] * 8)]


def test_a_failing_embedder_leaves_every_visible_tool_declared(kit: Kit) -> None:
    def broken(texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("embedding service down")

    plugin = ToolRetrievalPlugin(EmbeddingToolRetriever(broken, kit.registry), top_k=1)
    candidates = {name: kit.registry.get(name) for name in TOOLS}
    assert plugin.select("weather", candidates) is None


async def test_plugs_into_build_app(kit: Kit) -> None:
    from adk_yuxi.runtime import AgentConfig, ToolRetrieval, build_app

    llm = ScriptedLlm(["ok"])
    config = AgentConfig(
        name="guarded", tools=TOOLS, skills=("reporting",), tool_retrieval=ToolRetrieval(top_k=1)
    )
    app = build_app(
        config,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(
            registry=kit.registry,
            skills=kit.catalog,
            retriever=EmbeddingToolRetriever(HashingEmbedder(), kit.registry),
        ),
    )
    await turn(app, "杭州天气怎么样")
    declared = set(llm.tool_names(0))
    assert "get_weather" in declared
    assert not {"send_email", "convert_currency", "make_report"} & declared
