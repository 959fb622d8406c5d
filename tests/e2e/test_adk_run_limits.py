"""`adk run` on an agent folder whose YAML config sets limits: they bind the local user,
who is no administrator (`LocalPrincipals`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_MODEL = '''
import os

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class AlwaysCalculates(BaseLlm):
    """Asks for the calculator at every call and counts its calls in a file."""

    async def generate_content_async(self, llm_request, stream=False):
        with open(os.environ["CALLS_FILE"], "a") as calls:
            calls.write("call\\n")
        part = types.Part.from_function_call(name="calculate", args={"expression": "6 * 7"})
        yield LlmResponse(content=types.Content(role="model", parts=[part]))
'''

_AGENT = """
from pathlib import Path

import adk_yuxi.tools.builtin  # noqa: F401
from adk_yuxi.runtime import AgentCatalog, LocalPrincipals, build_app

from .tiny_model import AlwaysCalculates

catalog = AgentCatalog.from_yaml(Path(__file__).parent / "capped.yaml")
app = build_app(
    "capped", LocalPrincipals(()), catalog=catalog, name="capped",
    model=AlwaysCalculates(model="always"),
)
root_agent = app.root_agent
"""

_CONFIG = """
tools: [calculate]
limits: {max_llm_calls: 3, early_stopping: force}
"""


@pytest.mark.slow
def test_adk_run_binds_a_plain_local_user_by_the_yaml_limits(tmp_path: Path) -> None:
    folder = tmp_path / "agents" / "capped"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(_AGENT)
    (folder / "tiny_model.py").write_text(_MODEL)
    (folder / "capped.yaml").write_text(_CONFIG)
    calls = tmp_path / "calls.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ADK_DISABLE_LOAD_DOTENV": "1",
        "CALLS_FILE": str(calls),
    }
    done = subprocess.run(
        [sys.executable, "-m", "google.adk.cli", "run", str(folder)],
        input="go\nexit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert calls.read_text().count("call") == 3
