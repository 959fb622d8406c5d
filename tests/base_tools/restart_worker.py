"""One OS process of the restart test: `ask` runs until the waiting point and exits;
`answer` (a new process) answers it through the store and resumes the run.

    python -m tests.base_tools.restart_worker ask|answer DB_URL STATE_DIR
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from adk_yuxi.storage import open_services
from adk_yuxi.testing import call
from adk_yuxi.waitpoints import WaitpointStore

from ._harness import APP, USER, make_runner, pending_calls, responses, run, user_text
from .test_ask_user_question import COLOUR, echo_answer


async def ask(db_url: str, state: Path) -> None:
    async with open_services(db_url, blob_dir=state / "blobs") as services:
        runner, _, _ = make_runner(services, [call("ask_user_question", questions=[COLOUR])])
        session = await services.session_service.create_session(app_name=APP, user_id=USER)
        events = await run(runner, session.id, user_text("pick a colour for me"))
        (pending,) = pending_calls(events)
        (state / "asked.json").write_text(json.dumps({"session": session.id, "point": pending.id}))
        await runner.close()


async def answer(db_url: str, state: Path) -> None:
    async with open_services(db_url, blob_dir=state / "blobs") as services:
        points = WaitpointStore(services.store)
        (point,) = (await points.list_pending(app_name=APP, user_id=USER)).items
        answered = await points.answer(point.id, {"colour": "blue"}, user_id=USER)
        runner, llm, _ = make_runner(services, [echo_answer])
        events = await run(runner, point.session_id, answered.resume_message())
        final = [p.text for e in events if e.content for p in e.content.parts or [] if p.text]
        result = {
            "tool": responses(events, "ask_user_question"),
            "final": final,
            "model_calls": len(llm.requests),
            "invocations": sorted({e.invocation_id for e in events}),
        }
        (state / "answered.json").write_text(json.dumps(result))
        await runner.close()


if __name__ == "__main__":
    mode, url, folder = sys.argv[1:4]
    asyncio.run({"ask": ask, "answer": answer}[mode](url, Path(folder)))
