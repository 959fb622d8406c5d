"""Artifact downloads through the host API: streamed from the payload file, not loaded.

Anchor: a route on the same server that sends the version as a host without
`open_payload` would, `load_artifact` (ADK's interface, the whole payload in memory)
and one `Response`. Contender: the host API's `GET …/artifacts/{name}`. Both served by
uvicorn on loopback to a streaming client that keeps nothing. Reported: the peak of
Python allocations while one download runs (tracemalloc, every thread) and the time
per MiB, both as ratios to the anchor, rounds interleaved.

    python -m bench.bench_artifact_download [--mib 64] [--rounds 5] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import uvicorn
from fastapi import Request, Response
from google.genai import types

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.apikeys import ApiKeyStore
from adk_yuxi.host import ApiConfig, create_app
from adk_yuxi.host._auth import authenticate
from adk_yuxi.runtime import AgentConfig
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.testing import ScriptedLlm
from bench._timing import format_table, median_rate, timed_rounds

AGENT, USER, NAME = "bench", "u", "payload.bin"
ANCHOR = "load_artifact + one Response (anchor)"
STREAMED = "GET …/artifacts/{name} over loopback, streamed"


async def _seed(services: YuxiServices, mib: int) -> str:
    access = AccessRepository(services.store)
    await access.save_user(User(id=USER))
    await access.save_resource(
        ResourceRecord(
            kind=ResourceKind.AGENT, id=AGENT, creator_id=USER, share=ShareConfig.public()
        )
    )
    data = os.urandom(mib << 20)
    part = types.Part.from_bytes(data=data, mime_type="application/octet-stream")
    await services.artifact_service.save_artifact(
        app_name=AGENT, user_id=USER, filename=f"user:{NAME}", artifact=part
    )
    return (await ApiKeyStore(services.store).issue(USER, issued_by=USER)).token


def _serve(config: ApiConfig) -> tuple[uvicorn.Server, threading.Thread, str]:
    app = create_app(config)

    async def whole(request: Request) -> Response:
        host = request.app.state.host
        await authenticate(request)  # the same key check as the API's route
        part = await host.services.artifact_service.load_artifact(
            app_name=AGENT, user_id=USER, filename=f"user:{NAME}"
        )
        return Response(part.inline_data.data, media_type="application/octet-stream")

    app.add_api_route("/bench/whole", whole, methods=["GET"])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    return server, thread, f"http://127.0.0.1:{sock.getsockname()[1]}"


async def _peak(run: Callable[[], Awaitable[int]]) -> float:
    """MiB of the highest Python allocation peak during one run."""
    tracemalloc.start()
    try:
        await run()
        return tracemalloc.get_traced_memory()[1] / (1 << 20)
    finally:
        tracemalloc.stop()


async def bench(mib: int, rounds: int) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="yx-bench-dl-"))
    url = f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
    services = open_services(url, blob_dir=tmp / "blobs")
    await services.prepare()
    token = await _seed(services, mib)
    config = ApiConfig(
        database_url=url,
        agents=(AgentConfig(name=AGENT, description="bench", tools=()),),
        model=ScriptedLlm([]),
        blob_dir=tmp / "blobs",
    )
    server, thread, base = _serve(config)
    client = httpx.AsyncClient(base_url=base, timeout=120)
    headers = {"Authorization": f"Bearer {token}"}

    async def anchor() -> int:
        part = await services.artifact_service.load_artifact(
            app_name=AGENT, user_id=USER, filename=f"user:{NAME}"
        )
        assert part is not None and part.inline_data is not None
        assert len(part.inline_data.data or b"") == mib << 20
        return mib

    async def streamed() -> int:
        size = 0
        async with client.stream(
            "GET", f"/v1/agents/{AGENT}/artifacts/{NAME}", headers=headers
        ) as r:
            assert r.status_code == 200
            async for chunk in r.aiter_raw(64 * 1024):
                size += len(chunk)
        assert size == mib << 20
        return mib

    try:
        contenders: dict[str, Callable[[], Awaitable[int]]] = {ANCHOR: anchor, STREAMED: streamed}
        peaks: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(rounds):
            for name, run in contenders.items():
                peaks[name].append(await _peak(run))
        times = await timed_rounds(contenders, rounds, collect=True)
    finally:
        await client.aclose()
        server.should_exit = True
        thread.join(timeout=30)
        await services.close()
    peak_anchor = median_rate(peaks[ANCHOR])
    time_anchor = median_rate(times[ANCHOR])
    rows = [
        [
            name,
            f"{median_rate(peaks[name]):.1f}",
            f"{median_rate(peaks[name]) / peak_anchor:.3f}",
            f"{median_rate(times[name]) * 1000:.2f}",
            f"{median_rate(times[name]) / time_anchor:.2f}",
        ]
        for name in contenders
    ]
    header = f"{mib} MiB artifact, {rounds} rounds, medians"
    table = format_table(["download", "peak MiB", "peak ratio", "ms per MiB", "time ratio"], rows)
    return f"{header}\n{table}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="16 MiB, 3 rounds")
    args = parser.parse_args(argv)
    mib, rounds = (16, 3) if args.quick else (args.mib, args.rounds)
    print(asyncio.run(bench(mib, rounds)))


if __name__ == "__main__":
    main()
