"""The per-invocation binding: a nested invocation adopted by its root shares the root's
run (rights, budget) and goes with it."""

from __future__ import annotations

import gc
from pathlib import Path

from adk_yuxi.runtime import AgentConfig, Limits
from adk_yuxi.runtime._binding import Run, RunBindings
from adk_yuxi.runtime._budget import RunBudget
from adk_yuxi.runtime._cache import RuntimeCache
from adk_yuxi.runtime._runtime import RuntimeFactory

from ._kit import Kit


class _Invocation:
    """Stands for ADK's invocation context: the binding only holds a weak reference."""


async def test_an_adopted_invocation_shares_the_root_run_and_goes_with_it(
    tmp_path: Path,
) -> None:
    kit = Kit(tmp_path)
    principal = kit.principal()
    cache = RuntimeCache(RuntimeFactory(AgentConfig(name="a"), registry=kit.registry))
    bindings = RunBindings(cache)
    root = Run(user_id="alice", invocation_id="root", runtime=cache.acquire(principal))
    root.budget = RunBudget.from_limits(Limits(max_llm_calls=2))
    context = _Invocation()
    bindings.bind(root, context)

    child = bindings.adopt("child", "root")
    assert child is root and bindings.get("child") is root
    assert child.budget is not None
    child.budget.llm_calls.charge()
    assert root.budget.llm_calls.count == 1  # one counter for the whole tree

    await bindings.release("child")  # the child ending does not end the root
    assert bindings.get("root") is root and bindings.get("child") is None
    bindings.adopt("child", "root")
    await bindings.release("root")
    assert bindings.get("root") is None and bindings.get("child") is None
    assert bindings.running == 0
    del context
    gc.collect()  # the finalizer was detached: nothing left to release
    assert bindings.running == 0
