"""The operations a client makes, each recorded in the history with its outcome.

HTTP operations go to one worker; a refused request (4xx) is `fail`, a request that
never connected is `fail`, a connection broken mid-answer or a timeout is `info`
(unknown). A stream's outcome is its last `run_status` frame, with the agent's final
text as the client saw it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import httpx

from adk_yuxi.ledger import LeaseExpired, LeaseHeld, LedgerError, RunInProgress
from adk_yuxi.waitpoints import WaitpointError

from .history import History, Op
from .library import Library
from .workers import AGENT, Worker

__all__ = ["Client"]

_BASE = f"/v1/agents/{AGENT}/sessions"
STREAM_TIMEOUT = httpx.Timeout(30.0, connect=3.0)
# How long the two-step library path retries a resume refused while the run is held.
LIB_RETRY_S = 3.0


def _error(response: httpx.Response, body: bytes) -> dict[str, Any]:
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = body[:200].decode(errors="replace")
    return {"http": response.status_code, "code": code}


def _final_text(data: dict[str, Any]) -> str:
    if data.get("author") == "user" or data.get("partial"):
        return ""
    parts = (data.get("content") or {}).get("parts") or []
    if any("function_call" in p and p["function_call"] for p in parts):
        return ""
    return "".join(p.get("text") or "" for p in parts if not p.get("thought"))


class Client:
    """One logical client process (`name`) of the history."""

    def __init__(
        self, name: str, history: History, token: str, libraries: Sequence[Library]
    ) -> None:
        self.name = name
        self.history = history
        self.auth = {"Authorization": f"Bearer {token}"}
        self.libraries = libraries

    def _http(self, worker: Worker) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=worker.base, headers=self.auth, timeout=STREAM_TIMEOUT)

    async def _stream(self, op: Op, worker: Worker, method: str, path: str, body: Any) -> Op:
        status: dict[str, Any] = {}
        final, run_id = "", None
        try:
            async with (
                self._http(worker) as http,
                http.stream(method, path, json=body) as response,
            ):
                run_id = response.headers.get("x-run-id")
                if response.status_code != 200:
                    raw = await response.aread()
                    return self.history.complete(op, "fail", value=_error(response, raw))
                event, data = "", []
                async for line in response.aiter_lines():
                    if line.startswith("event: "):
                        event = line.removeprefix("event: ")
                    elif line.startswith("data: "):
                        data.append(line.removeprefix("data: "))
                    elif not line and data:
                        parsed = json.loads("\n".join(data))
                        if event == "run_status":
                            status = parsed
                        elif event == "adk_event" and (text := _final_text(parsed)):
                            final = text
                        event, data = "", []
        except httpx.ConnectError as exc:
            return self.history.complete(op, "fail", value={"error": f"connect: {exc}"})
        except (httpx.TransportError, httpx.TimeoutException) as exc:
            broke = {"error": f"{type(exc).__name__}: {exc}"}
            return self.history.complete(op, "info", run_id=run_id or op.run_id, value=broke)
        value: dict[str, Any] = {
            "status": status.get("status"),
            "invocation_id": status.get("invocation_id"),
            "error_code": status.get("error_code"),
            "final_text": final,
        }
        return self.history.complete(
            op, "ok", run_id=status.get("run_id") or run_id or op.run_id, value=value
        )

    async def _call(self, op: Op, worker: Worker, method: str, path: str, **kw: Any) -> Any:
        """A plain request: (response, json) or the completed op when it failed."""
        try:
            async with self._http(worker) as http:
                response = await http.request(method, path, **kw)
        except httpx.ConnectError as exc:
            return self.history.complete(op, "fail", value={"error": f"connect: {exc}"})
        except (httpx.TransportError, httpx.TimeoutException) as exc:
            return self.history.complete(
                op, "info", value={"error": f"{type(exc).__name__}: {exc}"}
            )
        if response.status_code >= 300:
            return self.history.complete(op, "fail", value=_error(response, response.content))
        return response

    # -- operations -----------------------------------------------------------------------

    async def create(self, worker: Worker, session_id: str | None, key: str | None) -> Op:
        op = self.history.invoke(
            self.name, "create", worker=worker.name, session=session_id, value={"key": key}
        )
        headers = {"Idempotency-Key": key} if key else {}
        body = {"session_id": session_id} if session_id else None
        got = await self._call(op, worker, "POST", _BASE, json=body, headers=headers)
        if isinstance(got, Op):
            return got
        return self.history.complete(op, "ok", session=got.json()["id"])

    async def run(self, worker: Worker, session: str, tag: str, text: str) -> Op:
        op = self.history.invoke(
            self.name, "run", worker=worker.name, session=session, value={"tag": tag}
        )
        return await self._stream(op, worker, "POST", f"{_BASE}/{session}/runs", {"text": text})

    async def answer(self, worker: Worker, session: str, point: str, token: str) -> Op:
        op = self.history.invoke(
            self.name,
            "answer",
            worker=worker.name,
            session=session,
            point=point,
            value={"token": token},
        )
        path = f"{_BASE}/{session}/waitpoints/{point}/answer"
        return await self._stream(op, worker, "POST", path, {"answers": {"q-1": token}})

    async def follow(self, worker: Worker, session: str) -> Op:
        op = self.history.invoke(self.name, "follow", worker=worker.name, session=session)
        return await self._stream(op, worker, "GET", f"{_BASE}/{session}/events", None)

    async def cancel(self, worker: Worker, session: str, run_id: str) -> Op:
        op = self.history.invoke(
            self.name, "cancel", worker=worker.name, session=session, run_id=run_id
        )
        got = await self._call(op, worker, "POST", f"{_BASE}/{session}/runs/{run_id}/cancel")
        if isinstance(got, Op):
            return got
        value = {"http": got.status_code, "status": got.json()["status"]}
        return self.history.complete(op, "ok", value=value)

    async def delete(self, worker: Worker, session: str) -> Op:
        op = self.history.invoke(self.name, "delete", worker=worker.name, session=session)
        got = await self._call(op, worker, "DELETE", f"{_BASE}/{session}")
        return got if isinstance(got, Op) else self.history.complete(op, "ok")

    async def list(self, worker: Worker, session: str) -> Op:
        """The session's runs and pending waiting points, as one observation."""
        op = self.history.invoke(self.name, "list", worker=worker.name, session=session)
        runs = await self._call(op, worker, "GET", f"{_BASE}/{session}/runs")
        if isinstance(runs, Op):
            return runs
        points = await self._call(op, worker, "GET", f"{_BASE}/{session}/waitpoints")
        if isinstance(points, Op):
            return points
        value = {
            "runs": [
                {k: r[k] for k in ("id", "invocation_id", "status", "started_at")}
                for r in runs.json()["runs"]
            ],
            "points": [
                {k: p[k] for k in ("id", "invocation_id", "created_at")}
                for p in points.json()["waitpoints"]
            ],
        }
        return self.history.complete(op, "ok", value=value)

    # -- the library path -----------------------------------------------------------------

    async def lib_answer(
        self, session: str, point: str, token: str, which: int = 0, *, one_step: bool = False
    ) -> Op:
        op = self.history.invoke(
            self.name,
            "lib_answer",
            worker=f"lib{which}",
            session=session,
            point=point,
            value={"token": token, "one_step": one_step},
        )
        library = self.libraries[which]
        if one_step:  # claimed, then answered under the claim: a refusal recorded nothing
            try:
                resumed = await library.answer_and_resume(point, token)
            except (LedgerError, WaitpointError) as exc:
                return self.history.complete(op, "fail", value={"error": type(exc).__name__})
            except Exception as exc:  # the answer may or may not be recorded
                return self.history.complete(op, "info", value={"error": repr(exc)[:500]})
            return self.history.complete(op, "ok", run_id=resumed.run_id, value=resumed.value())
        try:
            await library.answer(point, token)
        except WaitpointError as exc:  # the store's refusal: the answer was not recorded
            return self.history.complete(op, "fail", value={"error": type(exc).__name__})
        # Recorded: the op is accepted whatever the run does; an exception from the run
        # is an ok without a final status. A run held elsewhere at this moment is retried,
        # as the two-step path's documentation says.
        deadline = asyncio.get_running_loop().time() + LIB_RETRY_S
        while True:
            done = await self._lib_run(op, point, which, accepted=True, final=False)
            if done is not None or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.1)
        if done is None:
            done = await self._lib_run(op, point, which, accepted=True)
        assert done is not None  # final: never None
        return done

    async def lib_resume(self, session: str, point: str, which: int = 0) -> Op:
        """A resume of a point answered (or withdrawn) before: a duplicate."""
        op = self.history.invoke(
            self.name, "lib_resume", worker=f"lib{which}", session=session, point=point
        )
        done = await self._lib_run(op, point, which, accepted=False)
        assert done is not None  # final: never None
        return done

    async def _lib_run(
        self, op: Op, point: str, which: int, *, accepted: bool, final: bool = True
    ) -> Op | None:
        """The op's completion, or None (when not `final`) for a refusal worth retrying:
        the run was held by another worker at that moment."""
        library = self.libraries[which]
        try:
            try:
                resumed = await library.resume(point)
            except LeaseExpired:
                if not accepted:
                    raise
                # The run's worker died holding it: taken over here, as documented.
                resumed = await library.take_over_and_resume(point)
        except (LeaseHeld, RunInProgress) as exc:
            if not final:
                return None
            refused = {"refused": f"{type(exc).__name__}: {exc}"[:500]}
            return self.history.complete(op, "ok" if accepted else "fail", value=refused)
        except (LedgerError, WaitpointError) as exc:  # refused before it started: final
            refused = {"refused": f"{type(exc).__name__}: {exc}"[:500]}
            return self.history.complete(op, "ok" if accepted else "fail", value=refused)
        except Exception as exc:  # anything else: the caller learnt nothing
            error = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            return self.history.complete(op, "ok" if accepted else "info", value=error)
        return self.history.complete(op, "ok", run_id=resumed.run_id, value=resumed.value())
