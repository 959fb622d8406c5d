"""Deleting a session deletes everything of it, in one transaction.

`DELETE …/sessions/{id}` removes the session and its events, its runs, its waiting
points, its idempotency keys, its session-scoped artifacts and the memories made
from it together, so a session
re-created with the same id starts clean. While a run of the session is running the
delete is refused (409 `run_in_progress`, nothing changes): the run's worker is still
writing, and cancelling is asynchronous; cancel it, then delete. A run waiting at a
waiting point executes nothing and is deleted with its questions.

The transaction first holds the session as a run would (`RunLedger.hold_for_delete`),
so a run or a resume racing the delete either wins before it (and the delete is 409)
or finds the session gone after it. Payload files no version references any more are
removed after the commit (a kill before leaves orphan files, swept later).
"""

from __future__ import annotations

from adk_yuxi.ledger import RunInProgress

from ._host import Host
from ._idempotent_create import creation_results

__all__ = ["purge_session"]


async def purge_session(host: Host, agent_id: str, app_name: str, user_id: str, sid: str) -> None:
    """Deletes session `sid` of `user_id` and all of it; `RunInProgress` while it runs."""
    # A running run whose worker died holds nothing: closed as failed first.
    current = await host.control.runs.current(app_name=app_name, user_id=user_id, session_id=sid)
    key = {"app_name": app_name, "user_id": user_id, "session_id": sid}
    services = host.services
    async with services.store.write() as tx:
        if not await host.ledger.hold_for_delete(tx, **key, worker=host.control.worker):
            raise RunInProgress(sid, current.run_id if current is not None else None)
        await services.session_service.forget_session(tx, **key)
        await services.memory_service.forget_session(tx, **key)
        await host.waitpoints.forget_session(tx, **key)
        await host.idempotency.forget_session(tx, user_id, agent_id, sid, creation_results(sid))
        unreferenced = await services.artifact_service.forget_session(tx, **key)
        await host.ledger.forget_session(tx, **key)  # the hold too
    await services.artifact_service.remove_payloads(unreferenced)
