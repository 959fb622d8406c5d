"""present_artifacts: workspace paths checked all-or-nothing, files saved as versioned
artifacts with the versions recorded in the event's artifact_delta."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import call

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
                "path": paths[0],
                "mime_type": "text/markdown",
                "size": 10,
                "version": 0,
            },
            {
                "name": "data.csv",
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
