"""``docs/tutorial.md`` runs as written: each command of its ``console`` blocks and its ``python``
block, in order, in a fresh folder, with LoCoMo from ``../shared``, and every output line it states
comes out, in the order it states them.

The page's convention: in a ``console`` block a line ``$ COMMAND`` is a command, the lines after it
are lines of its stdout (``...`` stands for lines left out); a ``python`` block is followed by a
``text`` block of lines of what it prints. Slow tier: the whole job takes minutes.
"""

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests._data import needs_locomo

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.md"


def _steps(text: str):
    """``(kind, code, expected lines)`` for each command and python block, in page order."""
    steps = []
    blocks = re.findall(r"```(console|python|text)\n(.*?)```", text, flags=re.S)
    for i, (kind, body) in enumerate(blocks):
        if kind == "console":
            for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
                command, *out = chunk.rstrip("\n").split("\n")
                steps.append(("console", command, [x.rstrip() for x in out]))
        elif kind == "python":
            after = blocks[i + 1] if i + 1 < len(blocks) else ("", "")
            out = after[1].rstrip("\n").split("\n") if after[0] == "text" else []
            steps.append(("python", body, [x.rstrip() for x in out]))
    return steps


def _in_order(expected: list[str], got: str, where: str) -> None:
    """Each stated line (``...`` skipped) is a line of ``got``, after the one before it."""
    lines = [x.rstrip() for x in got.splitlines()]
    at = 0
    for line in expected:
        if line == "...":
            continue
        try:
            at = lines.index(line, at) + 1
        except ValueError:
            raise AssertionError(
                f"{where}: the tutorial states the line\n  {line!r}\nwhich is not in the output "
                f"(after line {at}):\n{got}"
            ) from None


def test_tutorial_steps_parse():
    """The page holds the job's four commands, in order, each with stated output."""
    steps = _steps(TUTORIAL.read_text(encoding="utf-8"))
    commands = [code for kind, code, _ in steps if kind == "console"]
    firsts = [shlex.split(c)[:2] for c in commands]
    for job in (["retcon", "pair"], ["retcon", "fit"], ["retcon", "evaluate"]):
        assert job in firsts, f"the tutorial should run {' '.join(job)}"
    assert ["retcon", "paper-checks"] in firsts and ["python", "-m"] in firsts
    assert firsts.index(["retcon", "pair"]) < firsts.index(["retcon", "fit"])
    assert firsts.index(["retcon", "fit"]) < firsts.index(["retcon", "evaluate"])
    assert all(out for kind, _, out in steps), "every step states some of its output"
    assert any(kind == "python" for kind, _, _ in steps)


@pytest.mark.slow
@needs_locomo
def test_tutorial_runs_as_written(tmp_path, monkeypatch):
    pytest.importorskip("sklearn")
    pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    for kind, code, expected in _steps(TUTORIAL.read_text(encoding="utf-8")):
        if kind == "console":
            argv = shlex.split(code)
            # the page's `retcon` and `python` are this environment's
            argv = [sys.executable, "-m", "retcon", *argv[1:]] if argv[0] == "retcon" else argv
            argv = [sys.executable, *argv[1:]] if argv[0] == "python" else argv
            proc = subprocess.run(
                argv, check=False, capture_output=True, text=True, env=env, cwd=tmp_path
            )
            assert proc.returncode == 0, f"$ {code}\nexit {proc.returncode}:\n{proc.stderr}"
            _in_order(expected, proc.stdout, f"$ {code}")
        else:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                exec(compile(code, "docs/tutorial.md:python", "exec"), {"__name__": "tutorial"})
            _in_order(expected, buf.getvalue(), "the tutorial's python block")
