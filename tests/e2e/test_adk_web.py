"""`adk web agents` on a free loopback port: the apps are listed and /run completes, for
the assistant and for the skilled `build_app` app under the web UI's own user id; the
base tools answer there (a question answered the way the web UI sends it, a presented
file listed among the session's artifacts)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e._web import adk_web

# One `adk web` process serves the module: its tests stay on one worker
# (tests/_schedule.py, ONE_WORKER).
pytestmark = pytest.mark.slow

IN_MEMORY = ("--session_service_uri", "memory://", "--artifact_service_uri", "memory://")


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the apps keep their database and the skilled app its users' workspaces."""
    return tmp_path_factory.mktemp("records")


def records_env(folder: Path) -> dict[str, str]:
    return {
        "YUXI_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'yuxi.db'}",
        "YUXI_WORKSPACES": str(folder / "workspaces"),
    }


@pytest.fixture(scope="module")
def web(records: Path) -> Iterator[str]:
    with adk_web(*IN_MEMORY, log=records / "adk-web.log", **records_env(records)) as base:
        yield base


def test_list_apps_lists_the_assistant(web: str) -> None:
    apps = httpx.get(f"{web}/list-apps", timeout=10).json()
    assert "assistant" in apps and "skilled" in apps and "team" in apps


def _run(web: str, app: str, user: str, session_id: str, text: str) -> list[dict[str, Any]]:
    body = {
        "appName": app,
        "userId": user,
        "sessionId": session_id,
        "newMessage": {"role": "user", "parts": [{"text": text}]},
    }
    answer = httpx.post(f"{web}/run", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()
    return events


def _responses(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part["functionResponse"]
        for event in events
        for part in event.get("content", {}).get("parts", [])
        if "functionResponse" in part
    ]


@pytest.mark.parametrize("user", ["user", "someone-else"])
def test_skilled_serves_any_web_user_and_gates_until_the_skill_loads(web: str, user: str) -> None:
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    created = httpx.post(f"{web}/apps/skilled/users/{user}/sessions/{session_id}", json={})
    assert created.status_code == 200, created.text
    # Before the skill is loaded, save_note is not declared: the demo model answers instead.
    before = _run(web, "skilled", user, session_id, "remember the launch is on Friday")
    assert not any(r["name"] == "save_note" for r in _responses(before))
    assert all("errorCode" not in e for e in before), before

    loaded = _run(
        web, "skilled", user, session_id, '/call load_skill {"skill_name": "note-keeping"}'
    )
    assert [r["name"] for r in _responses(loaded)] == ["load_skill"]
    assert all("errorCode" not in e for e in loaded), loaded

    saved = _responses(_run(web, "skilled", user, session_id, "remember the launch is on Friday"))
    assert [r["name"] for r in saved] == ["save_note"]
    assert "error" not in saved[0]["response"], saved


def test_run_completes_a_tool_call(web: str) -> None:
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    session = httpx.post(
        f"{web}/apps/assistant/users/alice/sessions/{session_id}", json={}, timeout=10
    )
    assert session.status_code == 200, session.text
    body = {
        "appName": "assistant",
        "userId": "alice",
        "sessionId": session_id,
        "newMessage": {"role": "user", "parts": [{"text": "what is 19 + 23?"}]},
    }
    events = httpx.post(f"{web}/run", json=body, timeout=60).json()
    responses = [
        part["functionResponse"]
        for event in events
        for part in event.get("content", {}).get("parts", [])
        if "functionResponse" in part
    ]
    assert responses and responses[0]["name"] == "calculate"
    assert responses[0]["response"]["value"] == 42
    texts = [p.get("text", "") for e in events for p in e.get("content", {}).get("parts", [])]
    assert any("42" in t for t in texts)


def _calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part["functionCall"]
        for event in events
        for part in event.get("content", {}).get("parts", [])
        if "functionCall" in part
    ]


def _session(web: str, user: str) -> str:
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    created = httpx.post(f"{web}/apps/skilled/users/{user}/sessions/{session_id}", json={})
    assert created.status_code == 200, created.text
    return session_id


def test_question_answered_the_way_the_web_ui_sends_it(web: str) -> None:
    session_id = _session(web, "user")
    question = {
        "question": "Which colour?",
        "options": [{"label": "Red", "value": "red"}, {"label": "Blue", "value": "blue"}],
    }
    events = _run(
        web,
        "skilled",
        "user",
        session_id,
        "/call ask_user_question " + json.dumps({"questions": [question]}),
    )
    pending = [c for c in _calls(events) if c["name"] == "adk_request_input"]
    assert len(pending) == 1, events
    assert "Which colour?" in pending[0]["args"]["message"]
    # The web UI's input box sends the typed text as {"result": text}.
    reply = {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": pending[0]["id"],
                    "name": "adk_request_input",
                    "response": {"result": "blue"},
                }
            }
        ],
    }
    body = {"appName": "skilled", "userId": "user", "sessionId": session_id, "newMessage": reply}
    answer = httpx.post(f"{web}/run", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    (result,) = [r for r in _responses(answer.json()) if r["name"] == "ask_user_question"]
    assert result["response"]["answers"] == {"q-1": "blue"}


def test_presented_file_is_listed_as_an_artifact(web: str, records: Path) -> None:
    folder = records / "workspaces" / "user" / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.md").write_text("# Launch\nFriday.\n")
    session_id = _session(web, "user")
    events = _run(
        web,
        "skilled",
        "user",
        session_id,
        '/call present_artifacts {"filepaths": ["/workspace/reports/summary.md"]}',
    )
    (result,) = [r for r in _responses(events) if r["name"] == "present_artifacts"]
    (card,) = result["response"]["artifacts"]
    assert card["name"] == "reports/summary.md" and card["size"] == 17
    assert any(e.get("actions", {}).get("artifactDelta") for e in events)
    base = f"{web}/apps/skilled/users/user/sessions/{session_id}/artifacts"
    listed = httpx.get(base, timeout=10)
    assert listed.status_code == 200, listed.text
    assert "reports/summary.md" in listed.json()
    loaded = httpx.get(f"{base}/reports/summary.md", timeout=10)
    assert loaded.status_code == 200, loaded.text
    assert "inlineData" in loaded.json()


def test_knowledge_app_quotes_the_sample_corpus(web: str) -> None:
    session_id = f"k-{uuid.uuid4().hex[:8]}"
    created = httpx.post(f"{web}/apps/knowledge/users/web-reader/sessions/{session_id}", json={})
    assert created.status_code == 200, created.text
    events = _run(web, "knowledge", "web-reader", session_id, "数据库备份保留多少天？")
    calls = [
        part["functionCall"]["name"]
        for event in events
        for part in event.get("content", {}).get("parts", [])
        if "functionCall" in part
    ]
    assert calls == ["list_kbs", "query_kb"]
    final = events[-1]["content"]["parts"][0]["text"]
    assert "备份保留三十天" in final and "数据库运维手册.md" in final


def test_team_calls_an_agent_tool_and_transfers_within_the_whitelist(web: str) -> None:
    """The multi-agent app offline: a nested agent-tool run, a refused handoff with the
    allowed targets, then a handoff the writer answers."""
    user, session_id = "web-user", f"s-{uuid.uuid4().hex[:8]}"
    created = httpx.post(f"{web}/apps/team/users/{user}/sessions/{session_id}", json={})
    assert created.status_code == 200, created.text
    asked = _responses(_run(web, "team", user, session_id, "ask researcher what is 6 * 7"))
    assert [r["name"] for r in asked] == ["researcher"]
    assert "calculate returned" in asked[0]["response"]["result"]
    assert "42" in asked[0]["response"]["result"]
    refused = _responses(_run(web, "team", user, session_id, "hand it to the critic"))
    error = refused[0]["response"]["error"]
    assert error["code"] == "handoff_not_allowed"
    assert [a["name"] for a in error["allowed"]] == ["writer"]
    handed = _run(web, "team", user, session_id, "hand it to the writer")
    assert handed[-1]["author"] == "writer"
    assert all("errorCode" not in e for e in handed), handed


def test_an_unusable_model_is_one_line_at_start_and_an_error_event(tmp_path: Path) -> None:
    log = tmp_path / "adk-web.log"
    env = {"YUXI_MODEL": "nonsense", **records_env(tmp_path)}
    with adk_web(*IN_MEMORY, log=log, **env) as base:
        started = log.read_text()
        assert started.count("[adk_yuxi] YUXI_MODEL='nonsense' cannot be used") == 1
        assert "skilled" in httpx.get(f"{base}/list-apps", timeout=10).json()
        for app in ("assistant", "skilled", "team", "knowledge"):
            created = httpx.post(f"{base}/apps/{app}/users/u/sessions/s1", json={}, timeout=10)
            assert created.status_code == 200, created.text
            body = {
                "appName": app,
                "userId": "u",
                "sessionId": "s1",
                "newMessage": {"role": "user", "parts": [{"text": "hello"}]},
            }
            answer = httpx.post(f"{base}/run_sse", json=body, timeout=60)
            assert answer.status_code == 200, answer.text
            errors = [e for e in _sse_events(answer.text) if e.get("errorCode")]
            assert [e["errorCode"] for e in errors] == ["YUXI_MODEL_UNUSABLE"]
            assert errors[0]["errorMessage"].startswith("YUXI_MODEL='nonsense' cannot be used")
            assert "openai/MODEL" in errors[0]["errorMessage"]
    logged = log.read_text()
    assert "Traceback" not in logged
    assert logged.count("YUXI_MODEL='nonsense' cannot be used: ADK") == 1


def _sse_events(stream: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]


def test_the_assistant_compacts_and_still_recalls_the_first_turn(web: str) -> None:
    """The demo assistant's small budget: a dozen turns leave a summary event in the
    session (what the Events tab shows), and the first turn is still answered."""
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    url = f"{web}/apps/assistant/users/alice/sessions/{session_id}"
    assert httpx.post(url, json={}, timeout=10).status_code == 200

    def say(text: str) -> list[dict[str, Any]]:
        body = {
            "appName": "assistant",
            "userId": "alice",
            "sessionId": session_id,
            "newMessage": {"role": "user", "parts": [{"text": text}]},
        }
        answer = httpx.post(f"{web}/run", json=body, timeout=60)
        assert answer.status_code == 200, answer.text
        return list(answer.json())

    say("My locker code is 4711.")
    for i in range(11):
        say(f"Fact {i}: meeting room {i} is on floor {i % 5}.")
    events = httpx.get(url, timeout=10).json()["events"]
    summaries = [e["actions"]["compaction"] for e in events if e["actions"].get("compaction")]
    assert summaries, [e["author"] for e in events]
    assert summaries[-1]["startTimestamp"] == events[0]["timestamp"]
    assert "My locker code is 4711." in summaries[-1]["compactedContent"]["parts"][0]["text"]
    replies = say("What did I tell you about my locker code?")
    texts = [p.get("text", "") for e in replies for p in e.get("content", {}).get("parts", [])]
    assert any("4711" in t and "summary" in t for t in texts), texts
