"""The shipped agent tree (`agents/team`) tells no user of an agent they cannot reach:
the generated tool and transfer lists are narrowed per user, and the deployer's own
instructions and descriptions name no agent at all, through the real Runner."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import adk_yuxi.tools.builtin  # noqa: F401  (the tools the shipped configs name)
from adk_yuxi.models._request import system_instruction_text
from adk_yuxi.runtime import AgentCatalog, build_app
from adk_yuxi.testing import ScriptedLlm

from ._tree_kit import principal, run

CONFIGS = Path(__file__).resolve().parents[2] / "agents" / "team" / "configs"
CATALOG = AgentCatalog.from_yaml(CONFIGS)
OTHERS = sorted(set(CATALOG.names()) - {"coordinator"})


@pytest.mark.parametrize("hidden", OTHERS)
async def test_a_user_who_cannot_reach_an_agent_never_hears_of_it(hidden: str) -> None:
    model = ScriptedLlm(["hello"])
    readable = [name for name in CATALOG.names() if name != hidden]
    app = build_app("coordinator", principal("li", readable), catalog=CATALOG, model=model)
    await run(app, "li", "hello")
    [request] = model.requests
    seen = system_instruction_text(request) + " ".join(
        str(d.description)
        for t in request.config.tools or []
        for d in t.function_declarations or []
    )
    assert not re.search(rf"\b{hidden}\b", seen, re.I), seen


def test_the_deployers_texts_name_no_agent() -> None:
    """Instructions and descriptions are not filtered per user, so they name no agent."""
    names = "|".join(CATALOG.names())
    for name in CATALOG.names():
        config = CATALOG.get(name)
        for text in (config.instruction or "", config.description or ""):
            assert not re.search(rf"\b({names})\b", text, re.I), (name, text)
