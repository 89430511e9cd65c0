"""Every public name of every package resolves, and the command line lists every command.

STYLE §1: thin public ``__init__`` files with ``__all__``; one test imports every public name.
"""

import importlib
import subprocess
import sys

import pytest

PACKAGES = [
    "retcon",
    "theory",
    "sim",
    "oas",
    "oas.real",
    "experiments",
    "paper_checks",
    "retcon.bench",
]
COMMANDS = [
    "crossover",
    "simulate",
    "stress",
    "pair",
    "fit",
    "evaluate",
    "predict",
    "data",
    "paper-checks",
    "bench",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_resolves(name):
    module = importlib.import_module(name)
    assert isinstance(module.__all__, (list, tuple))
    missing = [n for n in module.__all__ if getattr(module, n, None) is None and n != "__version__"]
    assert not missing, f"{name}.__all__ names that do not resolve: {missing}"


def test_help_lists_every_command_without_importing_jax():
    code = (
        "import sys, io, contextlib\n"
        "from retcon.cli import build_parser\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    build_parser().print_help()\n"
        "print(buf.getvalue())\n"
        "print('JAX_LOADED' if 'jax' in sys.modules else 'JAX_ABSENT')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    for command in COMMANDS:
        assert f"    {command}" in out, f"`retcon --help` does not list {command!r}"
    assert "JAX_ABSENT" in out, (
        "building the CLI parser imported JAX; keep heavy imports inside run()"
    )
