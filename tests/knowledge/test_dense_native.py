"""The dense index's engine and the OCR runtime load in one process in either order:
usearch loaded first makes the later import of onnxruntime segfault the process
(a knowledge server that then converts a document with OCR, or a test worker)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

# Looked up, not imported: importing both here in the wrong order is the crash itself.
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("usearch", "onnxruntime")),
    reason="needs the knowledge and documents extras",
)


def test_the_index_engine_then_onnxruntime_in_one_process() -> None:
    script = (
        "from adk_yuxi.knowledge._dense import _index_class\n"
        "_index_class()(ndim=4, metric='cos', dtype='i8')\n"
        "import onnxruntime\n"
        "from rapidocr_onnxruntime import RapidOCR\n"
        "print('both loaded')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "both loaded" in done.stdout
