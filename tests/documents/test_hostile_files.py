"""Files that are not what their names say, through the real ocr_parse_file tool and the
real Runner: a named pipe, a socket and a directory named like documents are refused
at once (judged on the open descriptor), never waited on."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import register_tool
from adk_yuxi.tools._safe_file import NotARegularFile, OutsideRoot, read_regular_file
from adk_yuxi.tools.builtin import documents

from ..runtime._kit import Kit, function_responses, run_turn

pytestmark = pytest.mark.timeout(120)
CONFIG = AgentConfig(name="reader", tools=("ocr_parse_file",), skills=())


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    kit = Kit(tmp_path)
    register_tool(documents._TOOL, registry=kit.registry, binder=documents.bind_ocr_parse_file)
    return kit


async def parse_all(kit: Kit, workspace: Path, paths: list[str]) -> list[dict]:
    llm = ScriptedLlm([*(call("ocr_parse_file", path=p) for p in paths), "done"])
    app = build_app(
        CONFIG,
        kit.principal(),
        model=llm,
        toolbox=Toolbox(registry=kit.registry, skills=kit.catalog, workspace=workspace),
    )
    events = await run_turn(app, InMemorySessionService(), "s1", "read it")
    return function_responses(events)["ocr_parse_file"]


async def test_a_fifo_named_like_a_pdf_is_refused_at_once(kit: Kit, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.mkfifo(workspace / "pipe.pdf")
    (workspace / "folder.docx").mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(workspace / "sock.txt"))
    (workspace / "ok.txt").write_text("plain words")
    started = time.monotonic()
    try:
        results = await parse_all(kit, workspace, ["pipe.pdf", "sock.txt", "folder.docx", "ok.txt"])
    finally:
        server.close()
    assert time.monotonic() - started < 60  # a blocking open would wait for ever
    codes = [r.get("error", {}).get("code") for r in results[:3]]
    # A socket cannot even be opened (ENXIO): refused as unreadable, never waited on.
    assert codes == ["not_a_file", "unreadable", "not_a_file"]
    assert "plain words" in results[3]["content"]


def test_the_shared_reader_refuses_on_the_descriptor(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    os.mkfifo(root / "pipe")
    (root / "dir").mkdir()
    (tmp_path / "outside").write_text("x")
    with pytest.raises(NotARegularFile):
        read_regular_file(root / "pipe", root=root, max_bytes=100)
    with pytest.raises(NotARegularFile):
        read_regular_file(root / "dir", root=root, max_bytes=100)
    with pytest.raises(OutsideRoot):
        read_regular_file(tmp_path / "outside", root=root, max_bytes=100)
    os.symlink(tmp_path / "outside", root / "link")
    with pytest.raises(OSError):  # O_NOFOLLOW: a final symlink is never followed
        read_regular_file(root / "link", root=root, max_bytes=100)


# --- zip bombs: Office files are judged by what they inflate to ---------------------


def docx_bomb(inflated: int) -> bytes:
    """A valid .docx whose document.xml inflates to about ``inflated`` bytes."""
    import io
    import zipfile

    from .files import docx_bytes

    plain = docx_bytes(["x"], "Bomb")
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(plain)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bomb,
    ):
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "word/document.xml":
                paragraph = b"<w:p><w:r><w:t>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</w:t></w:r></w:p>"
                filler = paragraph * (inflated // len(paragraph))
                data = data.replace(b"</w:body>", filler + b"</w:body>")
            bomb.writestr(item.filename, data)
    return out.getvalue()


def lying_header(bomb: bytes) -> bytes:
    """The bomb with document.xml's sizes in both headers claiming 1,000 bytes."""
    import struct

    data = bytearray(bomb)
    name = b"word/document.xml"
    at = 0
    while (at := data.find(name, at + 1)) >= 0:
        if data[at - 46 : at - 42] == b"PK\x01\x02":  # central directory entry
            struct.pack_into("<I", data, at - 46 + 24, 1000)
        elif data[at - 30 : at - 26] == b"PK\x03\x04":  # local header
            struct.pack_into("<I", data, at - 30 + 22, 1000)
    return bytes(data)


def test_a_zip_bomb_is_refused_by_its_inflated_size() -> None:
    from adk_yuxi.documents import (
        CorruptDocumentError,
        DocumentTooLargeError,
        convert_document,
    )

    bomb = docx_bomb(10_000_000)
    assert len(bomb) < 40_000
    started = time.process_time()
    with pytest.raises(DocumentTooLargeError, match="inflates to more than 4000000"):
        convert_document(bomb, name="bomb.docx", max_bytes=200_000)
    with pytest.raises((DocumentTooLargeError, CorruptDocumentError)):
        convert_document(lying_header(bomb), name="bomb.docx", max_bytes=200_000)
    assert time.process_time() - started < 5
    small = convert_document(docx_bomb(20_000), name="ok.docx", max_bytes=200_000)
    assert "aaaa" in small.markdown


async def test_a_zip_bomb_through_ocr_parse_file(kit: Kit, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # The tool's own limit is 50 MB, so 200 MB inflated at most: a bomb beyond that.
    (workspace / "bomb.docx").write_bytes(docx_bomb(210 * 1024 * 1024))
    [result] = await parse_all(kit, workspace, ["bomb.docx"])
    assert result["error"]["code"] == "too_large"
    assert "inflates" in result["error"]["message"]
