"""`adk run agents/skilled`: a `build_app` agent whose tools open as skills load."""

from __future__ import annotations

import pytest

from tests.e2e._cli import BIN, run_command

pytestmark = pytest.mark.slow


def test_adk_run_skilled_gates_until_the_skill_loads() -> None:
    script = (
        "what is 12 * (3 + 4)?\n"
        "remember the launch is on Friday\n"
        '/call load_skill {"skill_name": "note-keeping"}\n'
        "remember the launch is on Friday\n"
        "exit\n"
    )
    done = run_command([str(BIN / "adk"), "run", "--in_memory", "agents/skilled"], stdin=script)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert '"value": 84' in out  # calculate: visible from the start (preloaded skill)
    assert out.count("save_note returned") == 1  # hidden until note-keeping was loaded
    assert 'load_skill returned {"skill_name": "note-keeping"' in out


def test_adk_run_answers_a_question_at_the_prompt() -> None:
    question = (
        '{"questions": [{"question": "Which colour?", "options": ['
        '{"label": "Red", "value": "red"}, {"label": "Blue", "value": "blue"}]}]}'
    )
    script = (
        f"/call ask_user_question {question}\n"
        "green\n"  # not an option: asked again at the same waiting point
        "blue\n"
        "exit\n"
    )
    done = run_command([str(BIN / "adk"), "run", "--in_memory", "agents/skilled"], stdin=script)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert out.count("[HITL input]") == 2, out[-3000:]
    assert "That answer was not accepted" in out
    assert '"answers": {"q-1": "blue"}' in out, out[-3000:]


def test_adk_run_skilled_says_how_to_reach_a_hidden_tool() -> None:
    script = (
        "remember buy milk\n"
        "/call no_such_tool {}\n"
        '/call load_skill {"skill_name": "no-such-skill"}\n'
        "exit\n"
    )
    done = run_command([str(BIN / "adk"), "run", "--in_memory", "agents/skilled"], stdin=script)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert (
        "I cannot call save_note yet: it opens when the skill 'note-keeping' is loaded."
        ' Load it with /call load_skill {"skill_name": "note-keeping"}'
    ) in out
    [seen] = [line for line in out.splitlines() if "named 'no_such_tool'" in line]
    assert "I cannot see a tool named 'no_such_tool' here. Tools I can see: " in seen
    assert "calculate" in seen and "load_skill" in seen and "save_note" not in seen
    assert 'load_skill returned {"error"' in out
    assert "Skills that exist here: exact-arithmetic, note-keeping" in out
    assert "save_note returned" not in out
