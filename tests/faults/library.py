"""The library resume paths, as a host service embedding the SDK would take them:
`answer_and_resume` (claim, answer, run), or an answer through `WaitpointStore` then
`resume_waitpoint(runner, point)` (claimed first), on a Runner with the `LedgerPlugin`,
in the test process, on the workers' database."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.adk.events.event import Event
from google.adk.runners import Runner

from adk_yuxi.access import AccessRepository
from adk_yuxi.ledger import (
    LedgerError,
    LedgerPlugin,
    RunNotFound,
    answer_and_resume,
    resume_waitpoint,
)
from adk_yuxi.models import OpenAICompatibleLlm
from adk_yuxi.runtime import AgentConfig, RunRecords, build_app
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.waitpoints import Waitpoint, WaitpointStore

from .snapshot import event_row
from .workers import AGENT, USER

__all__ = ["Library", "Resumed"]


@dataclass(frozen=True)
class Resumed:
    """What one `run_async` of a resume gave: the ledger's status of the run after it,
    the agent's final text and the error codes of its events."""

    status: str | None
    run_id: str | None
    invocation_id: str
    final_text: str
    errors: tuple[str, ...]

    def value(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "invocation_id": self.invocation_id,
            "final_text": self.final_text,
            "errors": list(self.errors),
        }


class Library:
    """One in-process Runner (worker name `lib`) over the shared database."""

    def __init__(self, url: str, blobs: Path, model_url: str, lease_seconds: float) -> None:
        self.services: YuxiServices = open_services(url, blob_dir=blobs)
        store = self.services.store
        self.points = WaitpointStore(store)
        access = AccessRepository(store)
        records = RunRecords(
            store, worker=f"lib:{uuid.uuid4().hex[:8]}", lease_seconds=lease_seconds
        )
        model = OpenAICompatibleLlm(model="scripted", api_key="test-key", base_url=model_url)
        app = build_app(
            AgentConfig(name=AGENT, description="Helps.", tools=()),
            access,
            model=model,
            capabilities=[records],
        )
        self.plugin = next(p for p in app.plugins if isinstance(p, LedgerPlugin))
        self.runner = Runner(
            app=app,
            session_service=self.services.session_service,
            memory_service=self.services.memory_service,
            artifact_service=self.services.artifact_service,
        )

    async def close(self) -> None:
        await self.runner.close()
        await self.services.close()

    async def answer(self, point_id: str, token: str) -> None:
        """Records the answer (raises the store's refusal: conflict, not found)."""
        await self.points.answer(point_id, {"q-1": token}, user_id=USER)

    async def answer_and_resume(self, point_id: str, token: str) -> Resumed:
        """The one-step path: claimed, answered under the claim, run to the end."""
        point = await self.points.get(point_id, user_id=USER)
        events = answer_and_resume(self.runner, self.points, point_id, {"q-1": token}, user_id=USER)
        return await self._drain(point, events)

    async def resume(self, point_id: str) -> Resumed:
        """Runs the point's resume message (its answer, or its dismissal) to the end."""
        point = await self.points.get(point_id, user_id=USER)
        return await self._drain(point, resume_waitpoint(self.runner, point))

    async def take_over_and_resume(self, point_id: str) -> Resumed:
        """After `LeaseExpired` (the run's worker died holding it), as docs/ledger.md
        says: the run is taken over here, then the point's resume continues it. Raises
        the ledger's refusal (`RunEnded` once a host closed it failed)."""
        point = await self.points.get(point_id, user_id=USER)
        record = await self.plugin.ledger.find(
            app_name=self.runner.app_name,
            user_id=USER,
            session_id=point.session_id,
            invocation_id=point.invocation_id,
        )
        if record is None:
            raise RunNotFound(f"{point.session_id}/{point.invocation_id}")
        await self.plugin.take_over(record.run_id)
        return await self._drain(point, self._continue(point))

    async def _continue(self, point: Waitpoint) -> AsyncIterator[Event]:
        try:
            async for event in self.runner.run_async(
                user_id=USER,
                session_id=point.session_id,
                invocation_id=point.invocation_id,
                new_message=point.resume_message(),
            ):
                yield event
        except RuntimeError as exc:  # ADK wraps a plugin's refusal
            if isinstance(exc.__cause__, LedgerError):
                raise exc.__cause__ from None
            raise

    async def _drain(self, point: Waitpoint, events: AsyncIterator[Event]) -> Resumed:
        final, errors = "", []
        async for event in events:
            row = event_row(event)
            if row.final:
                final = row.text
            if event.error_code:
                errors.append(event.error_code)
        record = await self.plugin.ledger.find(
            app_name=self.runner.app_name,
            user_id=USER,
            session_id=point.session_id,
            invocation_id=point.invocation_id,
        )
        return Resumed(
            status=None if record is None else record.status,
            run_id=None if record is None else record.run_id,
            invocation_id=point.invocation_id,
            final_text=final,
            errors=tuple(errors),
        )
