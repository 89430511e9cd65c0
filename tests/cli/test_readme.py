"""The README's Python API example runs as written, and pyright accepts it.

The README is the first code a user copies; this test keeps it working and type-correct.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def readme_api_example() -> str:
    """The code block of the README's "Python API" section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the Python API section should hold one python block"
    return blocks[0]


def test_readme_example_splits_its_key():
    """One root key split at once into named subkeys; no key is passed to two calls."""
    code = readme_api_example()
    assert "jax.random.split(key, 4)" in code
    for k in ("k_sim", "k_cross", "k_pair", "k_fit"):
        uses = len(re.findall(rf"\b{k}\b", code)) - 1  # the split defines it once
        assert uses == 1, f"{k} is used {uses} times; each subkey should be used exactly once"


@pytest.mark.slow  # moved from the fast tier to keep it under 3 minutes on 2 cores
def test_readme_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = readme_api_example()
    exec(compile(code, "README.md:Python API", "exec"), {"__name__": "readme_example"})
    assert (tmp_path / "router.json").is_file()


@pytest.mark.slow
def test_readme_example_type_checks(tmp_path):
    """pyright in strict mode reports no error in the example: every public name it calls has
    complete types (issue 22). Slow tier (about 6 s of pyright), so CI's `pytest -m slow` runs it."""
    pytest.importorskip("pyright")
    src = tmp_path / "readme_example.py"
    src.write_text("# pyright: strict\n" + readme_api_example(), encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyright",
            "-p",
            str(REPO),
            "--pythonpath",
            sys.executable,
            str(src),
        ],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 errors" in proc.stdout


def test_ci_runs_the_readmes_commands_verbatim():
    """Every command `.ci/run` marks "(verbatim)" (the first command after that comment) is a
    line of the README: the install and test commands a reader copies are the ones CI runs."""
    root = Path(__file__).resolve().parents[2]
    ci = (root / ".ci" / "run").read_text().splitlines()
    readme = set((root / "README.md").read_text().splitlines())
    marked = [i for i, line in enumerate(ci) if line.startswith("#") and "(verbatim)" in line]
    assert len(marked) >= 2  # the fast tier and the llm tier
    for i in marked:
        cmd = next(line for line in ci[i + 1 :] if line.strip() and not line.startswith("#"))
        assert cmd in readme, f".ci/run line not in the README: {cmd}"
