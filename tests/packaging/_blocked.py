"""Runs Python code in a child process where the optional extras' packages cannot be
imported, as in an install of the core alone (`pip install adk-yuxi`).

The child's import finders (`sys.meta_path`) answer "not found" for those packages, as
they would if the packages were absent; nothing of adk_yuxi is replaced. The real core
install is checked by `test_wheel_install.py`, slower; this one runs in seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Top-level modules that only the extras install (postgres, documents, knowledge, web,
# observability: its OpenTelemetry SDK comes with google-adk, the Prometheus client not).
EXTRA_MODULES = (
    "asyncpg",
    "markitdown",
    "pdfminer",
    "rapidocr_onnxruntime",
    "onnxruntime",
    "pypdfium2",
    "PIL",
    "numpy",
    "regex",
    "tqdm",
    "bm25s",
    "prometheus_client",
)

_BLOCKER = """
import sys
BLOCKED = set({blocked!r})
class _Hiding:
    def __init__(self, inner):
        self.inner = inner
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            return None
        return self.inner.find_spec(name, path, target)
    def __getattr__(self, attribute):
        return getattr(self.inner, attribute)
sys.meta_path[:] = [_Hiding(finder) for finder in sys.meta_path]
"""


def run_without_extras(code: str, *, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Runs `code` with this checkout first on the path and the extras unimportable."""
    script = _BLOCKER.format(blocked=EXTRA_MODULES) + textwrap.dedent(code)
    env = {k: v for k, v in os.environ.items() if k not in ("YUXI_MODEL", "OPENAI_API_KEY")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=180,
    )
