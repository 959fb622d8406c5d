"""A run as a server-sent event stream: every ADK event, then the final status."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from fastapi.responses import StreamingResponse
from google.adk.runners import Runner
from google.genai import types

from ._host import Host
from ._sse import event_frame, frame

__all__ = ["stream_run"]

log = logging.getLogger("adk_yuxi.services.api")


async def _events(
    host: Host, runner: Runner, user_id: str, session_id: str, message: types.Content
) -> AsyncIterator[bytes]:
    invocation: str | None = None
    error_code: str | None = None
    try:
        async for event in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message
        ):
            invocation = event.invocation_id
            if event.error_code:
                error_code = event.error_code
            yield event_frame(event)
    except Exception:
        # Nothing of the exception reaches the client: the operator log has it.
        log.exception("run failed: app=%s session=%s", runner.app_name, session_id)
        yield frame("run_status", {"status": "failed", "error_code": "internal_error"})
        return
    record = None
    if invocation is not None:
        record = await host.ledger.find(
            app_name=runner.app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=invocation,
        )
    # The ledger's outcome when it recorded the run; a run refused before it was
    # recorded (no access) has only its events.
    fallback = "failed" if error_code else "completed"
    status = record.status if record is not None else fallback
    yield frame(
        "run_status",
        {
            "status": status,
            "run_id": record.run_id if record is not None else None,
            "invocation_id": invocation,
            "error_code": error_code,
        },
    )


def stream_run(
    host: Host, runner: Runner, user_id: str, session_id: str, message: types.Content
) -> StreamingResponse:
    return StreamingResponse(
        _events(host, runner, user_id, session_id, message),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
