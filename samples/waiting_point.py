"""A host service answering a waiting point, offline: ask, list, answer, resume.

The agent asks the user a question (`ask_user_question`, here through the offline demo
model's `/call`); the run pauses and the request ends. Later, in another request (or
another process: the waiting point and the paused run live in the database), the host
lists the user's pending questions, answers one through `WaitpointStore.answer` and
resumes the same run with `resume_message()`. A second answer is a conflict (HTTP 409
for a host); the run ledger shows the run waiting, then completed.

    .venv/bin/python samples/waiting_point.py [--db PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

from google.adk.runners import Runner
from google.genai import types

from adk_yuxi import AgentConfig, RunRecords, build_app
from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.ledger import RunLedger
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.waitpoints import WaitpointConflict, WaitpointStore

AGENT = AgentConfig(name="planner", description="Plans with the user.", tools=())
QUESTION = {
    "questions": [
        {
            "question": "Which day suits the launch?",
            "options": [{"label": "Friday", "value": "fri"}, {"label": "Monday", "value": "mon"}],
        }
    ]
}


async def seed(access: AccessRepository) -> None:
    await access.save_user(User(id="mei"))
    await access.save_resource(
        ResourceRecord(
            kind=ResourceKind.AGENT, id=AGENT.name, creator_id="mei", share=ShareConfig.public()
        )
    )


async def stream(runner: Runner, user: str, session: str, message: types.Content) -> None:
    async for event in runner.run_async(user_id=user, session_id=session, new_message=message):
        for part in event.content.parts if event.content and event.content.parts else []:
            if part.function_call:
                print(f"  → {part.function_call.name}")
            elif part.function_response:
                print(f"  ← {json.dumps(part.function_response.response)[:120]}")
            elif part.text:
                print(f"  {event.author}: {part.text[:120]}")


async def run_statuses(services: YuxiServices, user: str, session: str) -> list[str]:
    found = await services.session_service.get_session(
        app_name=AGENT.name, user_id=user, session_id=session
    )
    assert found is not None
    ledger = RunLedger(services.store)
    invocations = dict.fromkeys(e.invocation_id for e in found.events)
    records = [
        await ledger.find(app_name=AGENT.name, user_id=user, session_id=session, invocation_id=i)
        for i in invocations
    ]
    return [r.status for r in records if r is not None]


async def main(db: Path) -> None:
    async with open_services(f"sqlite+aiosqlite:///{db}") as services:
        access = AccessRepository(services.store)
        await seed(access)
        app = build_app(AGENT, access, capabilities=[RunRecords(services.store)])
        runner = Runner(app=app, session_service=services.session_service)
        await services.session_service.create_session(
            app_name=AGENT.name, user_id="mei", session_id="s1"
        )
        try:
            print("request 1: mei asks for a plan")
            text = "/call ask_user_question " + json.dumps(QUESTION)
            await stream(
                runner, "mei", "s1", types.Content(role="user", parts=[types.Part(text=text)])
            )
            print(f"ledger: {await run_statuses(services, 'mei', 's1')}")

            print("request 2: the host lists mei's pending questions and answers one")
            points = WaitpointStore(services.store)
            (point,) = (await points.list_pending(app_name=AGENT.name, user_id="mei")).items
            print(f"  pending: {point.id} {point.questions[0]['question']}")
            answered = await points.answer(point.id, {"q-1": "fri"}, user_id="mei")
            print(f"  answered: {json.dumps(answered.answers)}")
            await stream(runner, "mei", point.session_id, answered.resume_message())
            try:
                await points.answer(point.id, {"q-1": "mon"}, user_id="mei")
            except WaitpointConflict as conflict:
                print(f"  a second answer: {conflict}")
            print(f"ledger: {await run_statuses(services, 'mei', 's1')}")
        finally:
            await runner.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    if args.db is not None:
        asyncio.run(main(args.db))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp) / "platform.db"))
