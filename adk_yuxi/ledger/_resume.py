"""`answer_and_resume` and `resume_waitpoint`: the library's resume of a run paused at a
waiting point.

They do what the host API does: the run is claimed in the ledger first (one
conditional statement), and only then does ADK see the answer. `answer_and_resume`
also records the answer under that claim, so an answer is never stored for a run
another worker holds at that moment; after a separate `WaitpointStore.answer`, a
`LeaseHeld` or `RunInProgress` from `resume_waitpoint` is worth retrying: the answer
is kept and waits for it. A refusal is raised
as the ledger's own error, before anything reaches the session: `RunEnded` for a
closed run (cancelled, failed, completed: it never runs again), `LeaseHeld` while the
invocation runs anywhere (on this Runner too), `LeaseExpired` when its worker's lease
lapsed (`LedgerPlugin.take_over` first), `RunInProgress` while another run of the
session runs. A plain `run_async(new_message=point.resume_message())` is claimed the
same way by the plugin; ADK then wraps a refusal in a `RuntimeError`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator

from google.adk.agents.run_config import RunConfig
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.genai import types

from ..waitpoints import Waitpoint, WaitpointConflict, WaitpointStore
from ._errors import LedgerError, NoLedger, RunNotFound
from ._plugin import PLUGIN_NAME, LedgerPlugin
from ._store import RunRecord

__all__ = ["answer_and_resume", "resume_waitpoint"]

logger = logging.getLogger("adk_yuxi.ledger")


async def resume_waitpoint(
    runner: Runner,
    point: Waitpoint,
    *,
    run_config: RunConfig | None = None,
    abort_signal: asyncio.Event | None = None,
) -> AsyncGenerator[Event, None]:
    """Resumes the run paused at `point` (answered or cancelled: `WaitpointConflict`
    while it is pending) on `runner`, whose App carries the `LedgerPlugin`; yields the
    run's events. The claim is made at the first iteration."""
    message = point.resume_message()
    plugin, record = await _claim(runner, point)
    async for event in _run(runner, plugin, record, point, message, run_config, abort_signal):
        yield event


async def answer_and_resume(
    runner: Runner,
    points: WaitpointStore,
    waitpoint_id: str,
    answers: object,
    *,
    user_id: str,
    run_config: RunConfig | None = None,
    abort_signal: asyncio.Event | None = None,
) -> AsyncGenerator[Event, None]:
    """Claims the run paused at the pending point, records `answers` under that claim
    (a refused answer gives the claim back: the run waits again, nothing changed) and
    resumes it on `runner`; yields the run's events."""
    point = await points.get(waitpoint_id, user_id=user_id)
    if point.status != "pending":
        raise WaitpointConflict(point.id, point.status)
    plugin, record = await _claim(runner, point)
    try:
        answered = await points.answer(point.id, answers, user_id=user_id)
    except BaseException:
        plugin.held.handed.pop(record.invocation_id, None)
        await plugin.ledger.finish(record.run_id, plugin.worker, "waiting")
        raise
    message = answered.resume_message()
    async for event in _run(runner, plugin, record, point, message, run_config, abort_signal):
        yield event


async def _claim(runner: Runner, point: Waitpoint) -> tuple[LedgerPlugin, RunRecord]:
    """The run of `point`, claimed for `runner`'s worker and handed to its plugin."""
    plugin = runner.plugin_manager.get_plugin(PLUGIN_NAME)
    if not isinstance(plugin, LedgerPlugin):
        raise NoLedger("the Runner's App has no LedgerPlugin to claim the run in")
    found = await plugin.ledger.find(
        app_name=point.app_name,
        user_id=point.user_id,
        session_id=point.session_id,
        invocation_id=point.invocation_id,
    )
    if found is None or found.app_name != runner.app_name:
        raise RunNotFound(f"{point.session_id}/{point.invocation_id}")
    plugin.held.refuse_if_executing(point.invocation_id)
    record, resumed = await plugin.ledger.claim(
        app_name=found.app_name,
        user_id=found.user_id,
        session_id=found.session_id,
        invocation_id=found.invocation_id,
        agent_name=found.agent_name,
        worker=plugin.worker,
        lease_seconds=plugin.lease_seconds,
        resume_only=True,  # deleted since `find`: never recorded again
    )
    plugin.held.hand_over(record, plugin.worker, report=False, resumed=resumed)
    return plugin, record


async def _run(
    runner: Runner,
    plugin: LedgerPlugin,
    record: RunRecord,
    point: Waitpoint,
    message: types.Content,
    run_config: RunConfig | None,
    abort_signal: asyncio.Event | None,
) -> AsyncGenerator[Event, None]:
    try:
        async for event in runner.run_async(
            user_id=point.user_id,
            session_id=point.session_id,
            invocation_id=point.invocation_id,
            new_message=message,
            run_config=run_config,
            abort_signal=abort_signal,
        ):
            yield event
    except RuntimeError as exc:
        # A refusal the plugin makes once it sees the session (an answer already
        # resumed) reaches here wrapped by ADK: raised as it is, as the others are.
        if isinstance(exc.__cause__, LedgerError):
            raise exc.__cause__ from None
        raise
    finally:
        if plugin.held.handed.get(record.invocation_id, (None,))[0] is record:
            # ADK failed before the run took its claim (nothing of it was stored):
            # the run waits at its point again.
            del plugin.held.handed[record.invocation_id]
            await plugin.ledger.finish(record.run_id, plugin.worker, "waiting")
