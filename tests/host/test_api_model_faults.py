"""What a caller of the host API is told when the model misbehaves the way a small local
model did: an empty reply and a context-length refusal each end the run with their
code's public sentence (never silently, never naming the model's URL)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk_yuxi.models import (
    MODEL_CONTEXT_EXCEEDED,
    MODEL_EMPTY_REPLY,
    OpenAICompatibleLlm,
    model_error_text,
)
from adk_yuxi.testing import ChatTurn, EmptyReply, ErrorReply, OpenAIScriptServer

from ._served import open_served, served_on_fixture  # noqa: F401
from .conftest import Api, new_session, parse_sse

CASES: dict[str, tuple[ChatTurn, str]] = {
    "empty": (EmptyReply(), MODEL_EMPTY_REPLY),
    "too-long": (ErrorReply(400, "maximum context length is 8192 tokens"), MODEL_CONTEXT_EXCEEDED),
}


@pytest.fixture(params=sorted(CASES))
async def served(
    request: pytest.FixtureRequest, db_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Api, str, OpenAIScriptServer]]:
    reply, code = CASES[request.param]
    with OpenAIScriptServer([reply], api_key="k") as host:
        model = OpenAICompatibleLlm(model="m", api_key="k", base_url=host.base_url)
        async for api in open_served(db_url, tmp_path, model=model):
            yield api, code, host


async def test_a_misbehaving_model_ends_the_run_with_its_public_sentence(
    served: tuple[Api, str, OpenAIScriptServer],
) -> None:
    api, code, host = served
    session = await new_session(api, "mei")
    path = f"/v1/agents/planner/sessions/{session}"
    live = await api.client.post(f"{path}/runs", json={"text": "hi"}, headers=api.auth("mei"))
    assert live.status_code == 200, live.text
    frames = parse_sse(live.text)
    errors = [f["data"] for f in frames if f["event"] == "adk_event" and "errorCode" in f["data"]]
    sentence = model_error_text(code)
    assert [e["errorCode"] for e in errors] == [code]
    assert errors[0]["content"]["parts"] == [{"text": f"[{code}] {sentence}"}]
    assert host.base_url not in live.text
    assert frames[-1]["data"]["error_code"] == code
