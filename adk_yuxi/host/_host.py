"""What one API process holds: the services, the access records, one Runner per agent."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from google.adk.runners import Runner

from adk_yuxi.access import AccessRepository, Principal, ResourceKind
from adk_yuxi.apikeys import ApiKeyStore
from adk_yuxi.ledger import RunLedger, per_user_workspaces
from adk_yuxi.observability import watch_pending_waitpoints
from adk_yuxi.runtime import AgentCatalog, AgentConfig, AgentTree, RunRecords, build_app
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.waitpoints import WaitpointStore

from ._config import ApiConfig
from ._control import RunControl
from ._errors import ApiError
from ._idempotency import IdempotencyKeys
from ._public_errors import PublicErrorsPlugin

__all__ = ["Host"]


class Host:
    """Opened once per process (the app's lifespan); every request shares it."""

    def __init__(self, config: ApiConfig) -> None:
        self.config = config
        self.services: YuxiServices = open_services(
            config.database_url, blob_dir=config.blob_dir, memory_embedder=config.memory_embedder
        )
        store = self.services.store
        self.access = AccessRepository(store)
        self.keys = ApiKeyStore(store)
        self.waitpoints = WaitpointStore(store)
        self.ledger = RunLedger(store)
        self.idempotency = IdempotencyKeys(store, ttl_seconds=config.idempotency_ttl_seconds)
        worker = config.worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.control = RunControl(
            store,
            worker=worker,
            lease_seconds=config.lease_seconds,
            poll_seconds=config.cancel_poll_seconds,
        )
        # The configs are one catalog; its root agents are the API's agents, each served
        # with its tree (built and gated per user by `build_app`, as for any App).
        catalog = AgentCatalog(config.agents)
        trees = AgentTree.forest(catalog)
        self.agents: dict[str, AgentConfig] = {t.root: t.config(t.root) for t in trees}
        self.runners: dict[str, Runner] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._unwatch: Callable[[], None] = lambda: None
        records = RunRecords(
            store,
            worker=worker,
            lease_seconds=config.lease_seconds,
            workspaces=(
                per_user_workspaces(config.workspace_root)
                if config.workspace_root is not None
                else None
            ),
        )
        for root in self.agents:
            app = build_app(
                root,
                self.access,
                catalog=catalog,
                toolbox=config.toolbox,
                # After the ledger: it records the error as it was; callers get the
                # public sentence.
                capabilities=[records, PublicErrorsPlugin(), *config.capabilities],
                model=config.model,
                output_schema=config.output_schema,
                on_refusal=config.on_refusal,
            )
            self.runners[root] = Runner(
                app=app,
                session_service=self.services.session_service,
                memory_service=self.services.memory_service,
                artifact_service=self.services.artifact_service,
            )

    async def start(self) -> None:
        await self.services.store.warm()  # the schema, then the pool's connections
        self.control.start()
        self._unwatch = watch_pending_waitpoints(self._pending_waitpoints)

    async def _pending_waitpoints(self) -> dict[str, int]:
        return await self.waitpoints.count_pending([r.app_name for r in self.runners.values()])

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Runs `work` beside the request: a dropped connection does not cancel it."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        self._unwatch()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.control.close()
        for runner in self.runners.values():
            await runner.close()
        await self.services.close()

    def usable_agents(self, principal: Principal) -> list[AgentConfig]:
        usable = principal.usable(ResourceKind.AGENT)
        return [a for name, a in self.agents.items() if name in usable]

    def runner_for(self, principal: Principal, agent_id: str) -> Runner:
        """The agent's Runner, if the caller may use it now; otherwise 404 (an agent
        the caller may not use is not shown to exist)."""
        runner = self.runners.get(agent_id)
        if runner is None or not principal.may_use(ResourceKind.AGENT, agent_id):
            raise ApiError(404, "not_found", "no such agent")
        return runner
