"""The per-invocation binding: the nested invocation of an agent tool gets a run of its
own that shares its caller's runtimes, rights and budget, and ends on its own."""

from __future__ import annotations

import gc
from pathlib import Path

from adk_yuxi.access import AccessDenied
from adk_yuxi.runtime import AgentCatalog, AgentConfig, AgentTree, Limits
from adk_yuxi.runtime.authorization._binding import Run, RunBindings
from adk_yuxi.runtime.authorization._budget import RunBudget
from adk_yuxi.runtime.authorization._errors import LlmCallLimitReached
from adk_yuxi.runtime.rights._cache import RuntimeCache
from adk_yuxi.runtime.rights._runtime import RuntimeFactory
from adk_yuxi.runtime.rights._tree_runtime import TreeRuntimeFactory

from ._kit import Kit


class _Invocation:
    """Stands for ADK's invocation context: the binding only holds a weak reference."""

    def __init__(self, invocation_id: str, user_id: str = "alice") -> None:
        self.invocation_id = invocation_id
        self.user_id = user_id


async def test_an_adopted_invocation_shares_the_callers_run_and_ends_on_its_own(
    tmp_path: Path,
) -> None:
    kit = Kit(tmp_path)
    principal = kit.principal()
    tree = AgentTree.build(AgentCatalog([AgentConfig(name="a")]), "a")
    factory = TreeRuntimeFactory(
        tree, {"a": RuntimeFactory(tree.config("a"), registry=kit.registry)}
    )
    cache = RuntimeCache(factory)
    bindings = RunBindings(cache)
    root = Run(user_id="alice", invocation_id="root", runtime=cache.acquire(principal))
    root.budget = RunBudget.from_limits(Limits(max_llm_calls=2))
    root_context = _Invocation("root")
    bindings.bind(root, root_context)

    child_context = _Invocation("child")
    child = bindings.adopt(child_context, "root", ("a",))
    assert child.refused is None and child is not root and bindings.get("child") is child
    assert child.parent is root and child.runtime is root.runtime and child.callers == ("a",)
    assert child.budget is root.budget
    child.budget.llm_calls.charge()
    assert root.budget.llm_calls.count == 1  # one counter for the whole turn

    await bindings.release("child")  # the child ending does not end the root
    assert bindings.get("root") is root and bindings.get("child") is None
    orphan = bindings.adopt(_Invocation("x"), "nobody", ())  # no caller: refused, not a root
    assert orphan.refused is AccessDenied and orphan.runtime is None and orphan.budget is None
    await bindings.release("x")

    abandoned = _Invocation("abandoned")
    assert bindings.adopt(abandoned, "root", ("a",)).refused is None
    del abandoned
    gc.collect()  # a nested run ADK dropped without after_run is released by its finalizer
    assert bindings.get("abandoned") is None

    root.stop = LlmCallLimitReached
    late_context, below_context = _Invocation("late"), _Invocation("below")
    late = bindings.adopt(late_context, "root", ("a",))  # a stopping caller
    assert late.refused is LlmCallLimitReached and late.budget is None
    child = bindings.adopt(below_context, "late", ("a", "b"))  # below it, too
    assert child.refused is LlmCallLimitReached
    await bindings.release("late")
    await bindings.release("below")
    await bindings.release("root")
    assert bindings.running == 0
    del root_context
    gc.collect()  # the finalizer was detached: nothing left to release
    assert bindings.running == 0
