"""A user who may read more than 256 bases keeps the knowledge tools: an agent that does
not narrow them gets a delegation over "what this user may read now"; a selection too
wide for a token is a visible error, never a silently missing server."""

from __future__ import annotations

import pytest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import ShareConfig
from adk_yuxi.knowledge import DelegationKeys
from adk_yuxi.knowledge._delegation import DelegationScopeError
from adk_yuxi.runtime import AgentConfig, DelegationStopped
from adk_yuxi.testing import ScriptedLlm, call
from tests.runtime._kit import function_responses, run_turn

from .test_agent import CONFIG, World, _app, world  # noqa: F401  (the fixture)

MANY = 260


async def _many_public_bases(world: World) -> None:  # noqa: F811
    for i in range(MANY):
        await world.platform.store.create_kb(
            f"Base {i:03d}", creator_id="admin", kb_id=f"b{i:03d}", share=ShareConfig.public()
        )


async def test_more_than_256_readable_bases_keep_the_knowledge_tools(world: World) -> None:  # noqa: F811
    await _many_public_bases(world)
    llm = ScriptedLlm([call("list_kbs"), call("query_kb", kb_id="hb", query="年假"), "done"])
    events = await run_turn(await _app(world, llm), InMemorySessionService(), "s1", "list")
    assert "list_kbs" in llm.tool_names(0)
    listed = function_responses(events)["list_kbs"][0]["structuredContent"]["kbs"]
    assert len(listed) == MANY + 2  # every public base, hb and other; never "secret"
    assert "secret" not in {kb["kb_id"] for kb in listed}
    hit = function_responses(events)["query_kb"][0]
    assert hit["isError"] is False and hit["structuredContent"]["kb_id"] == "hb"


async def test_a_narrowed_selection_too_wide_for_a_token_is_a_visible_error(
    world: World,  # noqa: F811
) -> None:
    await _many_public_bases(world)
    narrowed = AgentConfig(
        name="kb_assistant",
        preload_skills=("knowledge-base",),
        skills=("knowledge-base",),
        knowledges=tuple(f"b{i:03d}" for i in range(MANY)),
    )
    llm = ScriptedLlm([call("list_kbs"), "done"])
    events = await run_turn(await _app(world, llm, narrowed), InMemorySessionService(), "s2", "x")
    assert events[-1].error_code == DelegationStopped.CODE
    assert "narrow" in str(events[-1].content or events[-1].error_message)
    assert llm.remaining == 2  # the model was never asked


def test_the_token_over_everything_and_its_limit() -> None:
    keys = DelegationKeys.generate()
    signer, verifier = keys.signer(), keys.verifier()
    assert verifier.verify(signer.mint("u", "s", None)).kb_ids is None
    assert verifier.verify(signer.mint("u", "s", ["a", "b"])).kb_ids == ("a", "b")
    with pytest.raises(DelegationScopeError):
        signer.mint("u", "s", [f"k{i}" for i in range(257)])
