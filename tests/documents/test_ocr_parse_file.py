"""ocr_parse_file through the real Runner: workspace paths only, symlinks resolved,
fail closed; OCR of a scan the model asked for; clear errors for bad files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.runtime import AgentConfig, Limits, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import register_tool
from adk_yuxi.tools.builtin import documents

from ..runtime._kit import Kit, function_responses, run_turn
from .files import docx_bytes, pdf_bytes
from .ocr_pages import image_bytes, scanned_pdf_bytes

pytestmark = pytest.mark.timeout(600)
# Path probes are refusals, and refusals count as tool failures: room for every probe here.
CONFIG = AgentConfig(
    name="reader", tools=("ocr_parse_file",), skills=(), limits=Limits(max_tool_failures=20)
)


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    register_tool(documents._TOOL, registry=kit.registry, binder=documents.bind_ocr_parse_file)
    return kit


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "scan.pdf").write_bytes(scanned_pdf_bytes([["合同第一页 Contract page one"]]))
    (root / "photo.png").write_bytes(image_bytes(["白板上的字 Whiteboard notes"]))
    (root / "locked.pdf").write_bytes(pdf_bytes(["x"], encrypt=True))
    (root / "long.txt").write_text("line of text\n" * 3000)
    (tmp_path / "outside.txt").write_text("secret outside the workspace")
    os.symlink(tmp_path / "outside.txt", root / "escape.txt")
    os.symlink(root / "long.txt", root / "alias.txt")
    return root


async def parse_all(kit: Kit, workspace: Path | None, calls: list[dict]) -> list[dict]:
    llm = ScriptedLlm([*(call("ocr_parse_file", **args) for args in calls), "done"])
    app = build_app(
        CONFIG,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog, workspace=workspace),
    )
    events = await run_turn(app, InMemorySessionService(), "s1", "read it")
    assert "ocr_parse_file" in llm.tool_names(0)
    return function_responses(events)["ocr_parse_file"]


async def test_scan_and_photo_are_read_by_ocr(kit: Kit, workspace: Path) -> None:
    scan, photo = await parse_all(
        kit, workspace, [{"path": "docs/scan.pdf"}, {"path": "photo.png"}]
    )
    assert scan["converter"] == "pdf+ocr" and scan["pages"] == 1
    assert "合同第一页" in scan["content"] and "Contract" in scan["content"]
    assert photo["converter"] == "ocr-image"
    assert "白板上的字" in photo["content"] and "Whiteboard" in photo["content"]


async def test_paths_outside_the_workspace_are_refused(kit: Kit, workspace: Path) -> None:
    attempts = [
        "../outside.txt",
        "/etc/passwd",
        "escape.txt",
        "docs/../../outside.txt",
        "photo.png\x00.txt",
        str(workspace / "photo.png"),
    ]
    results = await parse_all(kit, workspace, [{"path": p} for p in attempts])
    for attempt, result in zip(attempts, results, strict=True):
        assert result["error"]["code"] == "resource_not_available", attempt
        assert "secret" not in str(result)


async def test_symlinks_inside_the_workspace_and_reading_on(kit: Kit, workspace: Path) -> None:
    first, second = await parse_all(
        kit, workspace, [{"path": "alias.txt"}, {"path": "alias.txt", "offset": 20_000}]
    )
    assert first["truncated"] is True and first["next_offset"] == 20_000
    assert "offset=20000" in first["content"]
    assert second["offset"] == 20_000 and second["truncated"] is False


async def test_bad_files_are_clear_errors(kit: Kit, workspace: Path) -> None:
    results = await parse_all(
        kit, workspace, [{"path": "locked.pdf"}, {"path": "missing.pdf"}, {"path": "docs"}]
    )
    assert [r["error"]["code"] for r in results] == [
        "password_protected",
        "file_not_found",
        "not_a_file",
    ]


async def test_without_a_workspace_every_path_is_refused(kit: Kit, workspace: Path) -> None:
    (result,) = await parse_all(kit, None, [{"path": "photo.png"}])
    assert result["error"]["code"] == "resource_not_available"


async def test_virtual_paths_under_workspace_name_the_same_files(kit: Kit, workspace: Path) -> None:
    attempts = [
        "/workspace/long.txt",
        "/workspace/docs/../../outside.txt",
        "/workspace/../outside.txt",
        "/workspace/escape.txt",
        "/workspace//etc/passwd",
        "/workspacelong.txt",
    ]
    read, *refused = await parse_all(kit, workspace, [{"path": p} for p in attempts])
    assert read["path"] == "/workspace/long.txt" and "line of text" in read["content"]
    for attempt, result in zip(attempts[1:], refused, strict=True):
        assert result["error"]["code"] == "resource_not_available", attempt
        assert "secret" not in str(result)


async def test_a_damaged_zip_is_a_corrupt_document(kit: Kit, workspace: Path) -> None:
    """A docx whose zip header `zipfile` refuses with NotImplementedError (the example
    that once escaped as a raw error) is answered as corrupt_document."""
    original = docx_bytes(["text"], "T")
    (workspace / "damaged.docx").write_bytes(original[:1220] + b"\x00\x00@" + original[1223:])
    (result,) = await parse_all(kit, workspace, [{"path": "damaged.docx"}])
    assert result["error"]["code"] == "corrupt_document"
    assert "damaged" in result["error"]["message"]
