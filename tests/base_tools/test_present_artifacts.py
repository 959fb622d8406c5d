"""present_artifacts: workspace paths checked all-or-nothing, files saved as versioned
artifacts with the versions recorded in the event's artifact_delta."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_yuxi.ledger import LedgerPlugin
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools.base import BASE_TOOLS, base_tool

from ._harness import APP, USER, make_runner, responses, run, user_text

NAME = "present_artifacts"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws" / USER
    (root / "reports").mkdir(parents=True)
    (root / "reports" / "summary.md").write_text("# Summary\n")
    (root / "data.csv").write_bytes(b"a,b\n1,2\n")
    (root / ".env").write_text("SECRET=1")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]")
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    (root / "escape.txt").symlink_to(outside)
    (root / "linkdir").symlink_to(tmp_path)
    (root / "inner-link.md").symlink_to(root / "reports" / "summary.md")
    (root / "hidden-link").symlink_to(root / ".env")
    os.mkfifo(root / "pipe")
    os.link(outside, root / "hard-link.txt")  # another name of a file outside
    (root / "twin.csv").write_text("twin")
    os.link(root / "twin.csv", root / "reports" / "twin-again.csv")  # both inside
    return root


async def present(services: YuxiServices, workspace: Any, *batches: list[str]):
    script = [call(NAME, filepaths=paths) for paths in batches] + ["done"]
    runner, _, _ = make_runner(services, script, workspace=workspace)
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    events = await run(runner, session.id, user_text("show me"))
    await runner.close()
    return session.id, events


async def test_presents_versioned_artifacts_with_delta(
    services: YuxiServices, workspace: Path
) -> None:
    paths = ["/workspace/reports/summary.md", "/workspace/data.csv"]
    sid, events = await present(services, workspace, paths, paths[:1])
    first, second = responses(events, NAME)
    assert first == {
        "artifacts": [
            {
                "name": "reports/summary.md",
                "artifact": "reports/summary.md",
                "path": paths[0],
                "mime_type": "text/markdown",
                "size": 10,
                "version": 0,
            },
            {
                "name": "data.csv",
                "artifact": "data.csv",
                "path": paths[1],
                "mime_type": "text/csv",
                "size": 8,
                "version": 0,
            },
        ]
    }
    assert second["artifacts"][0]["version"] == 1
    deltas = [e.actions.artifact_delta for e in events if e.actions.artifact_delta]
    assert deltas == [{"reports/summary.md": 0, "data.csv": 0}, {"reports/summary.md": 1}]
    service = services.artifact_service
    keys = await service.list_artifact_keys(app_name=APP, user_id=USER, session_id=sid)
    assert sorted(keys) == ["data.csv", "reports/summary.md"]
    part = await service.load_artifact(
        app_name=APP, user_id=USER, session_id=sid, filename="data.csv"
    )
    assert part is not None and part.inline_data is not None
    assert part.inline_data.data == b"a,b\n1,2\n"


@pytest.mark.parametrize(
    "bad",
    [
        "reports/summary.md",  # relative
        "/tmp/x",  # outside the virtual root
        "/workspace",  # the root itself
        "/workspace/",
        "/workspace/../outside.txt",
        "/workspace/reports/../data.csv",
        "/workspace/./data.csv",
        "/workspace//data.csv",
        "/workspace/reports",  # a directory
        "/workspace/missing.txt",
        "/workspace/.env",
        "/workspace/.git/config",
        "/workspace/escape.txt",  # symlink leaving the workspace
        "/workspace/linkdir/outside.txt",  # through a symlinked directory
        "/workspace/hidden-link",  # symlink onto an internal file
        "/workspace/pipe",  # not a regular file
        "/workspace/data.csv\x00.md",
        "/workspace/data\n.csv",
        "/workspace/data\x7f.csv",  # DEL
        "/workspace/data\x85.csv",  # NEL (C1)
        "/workspace/data\x9b31m.csv",  # CSI (C1)
        "/workspace/report\u202etxt.exe",  # right-to-left override
        "/workspace/a\u202a.csv",
        "/workspace/a\u2066.csv",
        "/workspace/a\u2069.csv",
        "/workspace/a\u200e.csv",
        "/workspace/a\u200f.csv",
        "/workspace/a\u061c.csv",
        "/workspace/hard-link.txt",  # a hard link to a file outside the workspace
        "/workspace/reports/twin-again.csv",  # any file with a second link
        "/workspace\\data.csv",
        "/workspaceX/data.csv",
    ],
)
async def test_one_bad_path_saves_nothing(
    services: YuxiServices, workspace: Path, bad: str
) -> None:
    sid, events = await present(services, workspace, ["/workspace/data.csv", bad])
    (result,) = responses(events, NAME)
    assert result["error"]["code"] == "resource_not_available"
    assert [p["path"] for p in result["error"]["problems"]] == [bad]
    assert (
        await services.artifact_service.list_artifact_keys(
            app_name=APP, user_id=USER, session_id=sid
        )
        == []
    )
    assert not [e for e in events if e.actions.artifact_delta]


async def test_symlink_inside_the_workspace_is_followed(
    services: YuxiServices, workspace: Path
) -> None:
    _, events = await present(services, workspace, ["/workspace/inner-link.md"])
    (result,) = responses(events, NAME)
    assert result["artifacts"][0]["name"] == "inner-link.md"


async def test_repeated_path_and_missing_workspace(services: YuxiServices, workspace: Path) -> None:
    _, events = await present(services, workspace, ["/workspace/data.csv"] * 2)
    assert responses(events, NAME)[0]["error"]["code"] == "resource_not_available"
    _, events = await present(services, None, ["/workspace/data.csv"])
    assert responses(events, NAME)[0]["error"]["code"] == "tool_not_available"


async def test_workspace_per_user(services: YuxiServices, workspace: Path) -> None:
    roots = workspace.parent
    _, events = await present(services, lambda user: roots / user, ["/workspace/data.csv"])
    assert responses(events, NAME)[0]["artifacts"][0]["size"] == 8


@pytest.mark.parametrize(
    "name",
    ["data\x85.csv", "data\x9b31m.csv", "report\u202etxt.exe", "a\u2067.csv", "a\x00b"],
)
async def test_names_with_control_or_bidi_characters_are_refused_even_if_on_disk(
    services: YuxiServices, workspace: Path, name: str
) -> None:
    """The file exists (NUL aside, which no file name can hold): refused by its name."""
    if "\x00" not in name:
        (workspace / name).write_text("x")
    path = f"/workspace/{name}"
    sid, events = await present(services, workspace, [path])
    (result,) = responses(events, NAME)
    (problem,) = result["error"]["problems"]
    assert problem["problem"] == (
        "contains a control, surrogate or bidirectional formatting character"
    )
    keys = await services.artifact_service.list_artifact_keys(
        app_name=APP, user_id=USER, session_id=sid
    )
    assert keys == []


async def test_a_hard_link_is_refused_with_a_clear_problem(
    services: YuxiServices, workspace: Path
) -> None:
    _, events = await present(services, workspace, ["/workspace/hard-link.txt"])
    (problem,) = responses(events, NAME)[0]["error"]["problems"]
    assert "more than one hard link" in problem["problem"]
    # Once the other name is gone the file has one link and is presented.
    _, events = await present(services, workspace, ["/workspace/twin.csv"])
    assert (
        "more than one hard link" in responses(events, NAME)[0]["error"]["problems"][0]["problem"]
    )
    os.unlink(workspace / "reports" / "twin-again.csv")
    _, events = await present(services, workspace, ["/workspace/twin.csv"])
    assert responses(events, NAME)[0]["artifacts"][0]["size"] == 4


async def test_a_user_prefixed_file_is_presented_in_its_session_only(
    services: YuxiServices, workspace: Path
) -> None:
    """`user:notes.txt` is a workspace file like any other: it is saved in the session
    (under `.workspace/`), never as ADK's user-scoped artifact of the same name."""
    services_artifacts = services.artifact_service
    await services_artifacts.save_artifact(
        app_name=APP,
        user_id=USER,
        filename="user:notes.txt",
        artifact=types.Part.from_bytes(data=b"the user's own", mime_type="text/plain"),
    )
    (workspace / "user:notes.txt").write_text("from the workspace")
    sid, events = await present(services, workspace, ["/workspace/user:notes.txt"])
    (card,) = responses(events, NAME)[0]["artifacts"]
    assert card["name"] == "user:notes.txt"
    assert card["artifact"] == ".workspace/user:notes.txt" and card["version"] == 0
    deltas = [e.actions.artifact_delta for e in events if e.actions.artifact_delta]
    assert deltas == [{".workspace/user:notes.txt": 0}]
    # The user-scoped artifact is untouched (one version, its own bytes) ...
    user_part = await services_artifacts.load_artifact(
        app_name=APP, user_id=USER, filename="user:notes.txt"
    )
    assert user_part is not None and user_part.inline_data is not None
    assert user_part.inline_data.data == b"the user's own"
    versions = await services_artifacts.list_versions(
        app_name=APP, user_id=USER, filename="user:notes.txt"
    )
    assert versions == [0]
    # ... the presented file is in this session, with its display name ...
    saved = await services_artifacts.load_artifact(
        app_name=APP, user_id=USER, session_id=sid, filename=".workspace/user:notes.txt"
    )
    assert saved is not None and saved.inline_data is not None
    assert saved.inline_data.data == b"from the workspace"
    (info,) = await services_artifacts.list_artifact_versions(
        app_name=APP, user_id=USER, session_id=sid, filename=".workspace/user:notes.txt"
    )
    assert info.custom_metadata == {"display_name": "user:notes.txt"}
    # ... and another session of the user does not see it.
    other = await services.session_service.create_session(app_name=APP, user_id=USER)
    keys = await services_artifacts.list_artifact_keys(
        app_name=APP, user_id=USER, session_id=other.id
    )
    assert ".workspace/user:notes.txt" not in keys and "user:notes.txt" in keys


async def test_a_lone_surrogate_in_a_path_is_refused_before_anything_is_saved(
    services: YuxiServices, workspace: Path
) -> None:
    """The SQL session store refuses such a call before the tool runs; with a session
    store that keeps it (ADK's in-memory one) the strict argument check refuses it
    (and the path check would): the file on disk (a non-UTF-8 name) is never saved,
    nor the good file before it."""
    (workspace / "a\udc80.csv").write_text("x")  # the raw byte 0x80 on disk
    llm = ScriptedLlm([call(NAME, filepaths=["/workspace/data.csv", "/workspace/a\udc80.csv"])])
    agent = LlmAgent(name="helper", model=llm, tools=[base_tool(t) for t in BASE_TOOLS])
    runner = Runner(
        app=App(
            name=APP, root_agent=agent, plugins=[LedgerPlugin(services.store, workspace=workspace)]
        ),
        session_service=InMemorySessionService(),  # type: ignore[no-untyped-call]
        artifact_service=services.artifact_service,
    )
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    llm.extend(["done"])
    events = await run(runner, session.id, user_text("show me"))
    await runner.close()
    (result,) = responses(events, NAME)
    assert "surrogate" in str(result["error"])
    keys = await services.artifact_service.list_artifact_keys(
        app_name=APP, user_id=USER, session_id=session.id
    )
    assert keys == []
