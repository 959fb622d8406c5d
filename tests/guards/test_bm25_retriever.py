"""The BM25 tool retriever: ranking in both languages, only among candidates, one index
per registry version."""

from __future__ import annotations

from typing import Any

from google.adk.tools.base_tool import BaseTool

from adk_yuxi.guards import BM25ToolRetriever, ToolRetriever
from adk_yuxi.tools import ToolRegistry, tool


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @tool(registry=reg, display_name="知识库检索", tags=["knowledge", "检索"])
    def search_knowledge_base(query: str) -> dict[str, Any]:
        """Searches the documents of a knowledge base. 在知识库文档中搜索相关内容。"""
        return {}

    @tool(registry=reg, display_name="Weather", tags=["weather"])
    def get_weather(city: str) -> dict[str, Any]:
        """Current weather for a city. 查询城市天气。"""
        return {}

    @tool(registry=reg, display_name="Send email", tags=["mail"])
    def send_email(to: str) -> dict[str, Any]:
        """Sends an email. 发送电子邮件。"""
        return {}

    return reg


def tools(reg: ToolRegistry, *names: str) -> dict[str, BaseTool]:
    return {name: reg.get(name) for name in names or reg.ids()}


def outsider(name: str, description: str) -> dict[str, BaseTool]:
    return {name: BaseTool(name=name, description=description)}


def test_ranks_english_and_chinese_queries() -> None:
    reg = registry()
    retriever = BM25ToolRetriever(reg)
    ALL = tools(reg)
    assert isinstance(retriever, ToolRetriever)
    assert retriever.retrieve("what's the weather in Paris", ALL, 1) == ["get_weather"]
    assert retriever.retrieve("帮我在知识库里找一下报销制度", ALL, 1) == ["search_knowledge_base"]
    assert retriever.retrieve("给老板发一封邮件", ALL, 1) == ["send_email"]
    assert retriever.retrieve("", ALL, 3) == []
    assert retriever.retrieve("zzz qqq", ALL, 3) == []


def test_only_candidates_are_returned() -> None:
    reg = registry()
    retriever = BM25ToolRetriever(reg)
    candidates = tools(reg, "send_email", "get_weather")
    assert "search_knowledge_base" not in retriever.retrieve("知识库 检索 文档", candidates, 3)


def test_tools_outside_the_registry_are_ranked_from_their_declaration() -> None:
    reg = registry()
    retriever = BM25ToolRetriever(reg)
    crm = outsider("crm_lookup_customer", "Finds a customer record in the CRM. 查询客户")
    candidates = {**tools(reg), **crm}
    assert retriever.retrieve("look up the customer record", candidates, 1) == [
        "crm_lookup_customer"
    ]
    assert retriever.retrieve("查询客户资料", candidates, 1) == ["crm_lookup_customer"]


def test_index_is_built_once_per_registry_version() -> None:
    reg = registry()
    retriever = BM25ToolRetriever(reg)
    ALL = tools(reg)
    for _ in range(5):
        retriever.retrieve("weather", ALL, 2)
    assert retriever.builds == 1

    @tool(registry=reg, display_name="Translate")
    def translate(text: str) -> dict[str, Any]:
        """Translates text into another language. 翻译文本。"""
        return {}

    assert retriever.retrieve("翻译这段话", tools(reg), 1) == ["translate"]
    assert retriever.builds == 2
    reg.unregister("translate")
    # Unregistered: only its bare name is left to match, and the query does not name it.
    gone = outsider("translate", "")
    assert "translate" not in retriever.retrieve("翻译这段话", {**ALL, **gone}, 3)
    assert retriever.builds == 3
