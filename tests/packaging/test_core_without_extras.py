"""The core install without any extra: every public package imports, and each part that
needs an extra says which one, as a tool's unavailability reason or as one error line."""

from __future__ import annotations

from pathlib import Path

from tests.packaging._blocked import run_without_extras
from tests.test_public_api import PUBLIC

PACKAGES = sorted({*PUBLIC, "adk_yuxi.host", "adk_yuxi.tools.builtin", "adk_yuxi.tools.base"})


def test_every_public_package_imports_without_the_extras() -> None:
    done = run_without_extras(
        f"""
        import importlib, sys
        for name in {PACKAGES!r}:
            importlib.import_module(name)
        print("imported", len({PACKAGES!r}))
        """
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"imported {len(PACKAGES)}" in done.stdout


def test_parts_that_need_an_extra_name_it() -> None:
    done = run_without_extras(
        """
        import asyncio
        import adk_yuxi.tools.builtin
        from adk_yuxi.errors import MissingExtraError
        from adk_yuxi.tools import ToolSettings, ToolUnavailable, default_registry
        from adk_yuxi.web import WebSettings
        from adk_yuxi.documents import UnsupportedDocumentError, convert_document
        from adk_yuxi._sql.store import SqlStore

        def reason(tool_id, *sections):
            try:
                default_registry.bind(tool_id, ToolSettings(*sections, environ={}))
            except ToolUnavailable as exc:
                return exc.reason
            return "available"

        print("ocr:", reason("ocr_parse_file"))
        print("fetch:", reason("web_fetch", WebSettings(fetch_provider="direct")))
        try:
            convert_document(b"%PDF-1.4\\n%%EOF\\n", name="a.pdf")
        except UnsupportedDocumentError as exc:
            print("pdf:", exc)
        print("text:", convert_document(b"plain words", name="a.txt").markdown)
        try:
            SqlStore("postgresql://postgres@127.0.0.1/test")
        except MissingExtraError as exc:
            print("postgres:", exc)
        try:
            from adk_yuxi.knowledge import KnowledgeStore
        except MissingExtraError as exc:
            print("knowledge:", exc)
        """
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    assert lines["ocr"].endswith("pip install 'adk-yuxi[documents]'")
    assert lines["fetch"].endswith("pip install 'adk-yuxi[web]'")
    assert lines["pdf"].endswith("pip install 'adk-yuxi[documents]'")
    assert lines["text"] == "plain words"
    assert lines["postgres"].endswith("pip install 'adk-yuxi[postgres]'")
    assert lines["knowledge"].endswith("pip install 'adk-yuxi[knowledge]'")


def test_a_yuxi_command_that_needs_an_extra_says_which_in_one_line(tmp_path: Path) -> None:
    done = run_without_extras(
        """
        from adk_yuxi.cli import main
        main(["kb", "list"], prog_name="yuxi")
        """,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: adk_yuxi.knowledge.KnowledgeStore needs the 'numpy' package, which is not"
        " installed: pip install 'adk-yuxi[knowledge]'"
    ]
