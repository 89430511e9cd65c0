"""Every public name of every package resolves, and the command line lists every command.

Thin public ``__init__`` files; one test imports every public name. Each package declares each
public name once, in its ``__init__.pyi`` (``from ._crossover import crossover as crossover``):
type checkers and editors read it, and ``retcon.lazy.attach_stub`` serves the same names at run
time on first use (so that ``retcon crossover`` imports no JAX or sympy, and ``oas`` predicts
without JAX).
"""

import ast
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = [
    "retcon",
    "theory",
    "sim",
    "oas",
    "oas.real",
    "experiments",
    "paper_checks",
    "benchmarks",
]
TOP_LEVEL = ("retcon", "theory", "sim", "oas", "paper_checks", "experiments", "benchmarks")
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


def _init_tree(name: str) -> ast.Module:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


def _stub_names(name: str) -> dict[str, str]:
    """Public name -> ``module:attribute`` (or ``module`` for a submodule) from the package's
    ``__init__.pyi``: the one declaration of its public names."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    stub = Path(spec.origin).with_suffix(".pyi")
    names: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Expr):
            continue  # docstring
        assert isinstance(node, ast.ImportFrom) and node.level == 1, ast.unparse(node)
        for alias in node.names:
            # `import x as x` is the explicit re-export form type checkers honour.
            assert alias.asname == alias.name, f"{ast.unparse(node)}: write `as {alias.name}`"
            assert alias.asname not in names, f"{name}: {alias.asname} declared twice"
            names[alias.asname] = (
                f"{name}.{node.module}:{alias.name}" if node.module else f"{name}.{alias.name}"
            )
    return names


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_resolves(name):
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list)
    missing = [n for n in module.__all__ if getattr(module, n, None) is None]
    assert not missing, f"{name}.__all__ names that do not resolve: {missing}"


LAZY = [p for p in PACKAGES if p != "experiments"]


@pytest.mark.parametrize("name", LAZY)
def test_one_declaration_per_public_name(name):
    """Each package lists its public names once, in ``__init__.pyi``; ``__init__.py`` holds only
    the docstring and ``attach_stub``, so there is no second list to forget a name in."""
    module = importlib.import_module(name)
    tree = _init_tree(name)
    code = [n for n in tree.body if not isinstance(n, ast.Expr)]
    assert [ast.unparse(n) for n in code] == [
        "from retcon.lazy import attach_stub",
        "__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)",
    ], f"{name}/__init__.py declares names outside its stub"
    declared = _stub_names(name)
    assert module.__all__ == list(declared)
    for public, target in declared.items():
        mod, _, attr = target.partition(":")
        want = importlib.import_module(mod)
        assert getattr(module, public) is (getattr(want, attr) if attr else want), public


def test_experiments_lists_its_names_once():
    """``experiments`` defines its one public name itself: a literal ``__all__``, no stub."""
    import experiments

    assert experiments.__all__ == ["NAMES"]
    assert importlib.util.find_spec("experiments").origin.endswith("__init__.py")
    assert not (REPO / "experiments" / "__init__.pyi").exists()


def test_a_public_name_lives_in_one_package():
    """One declaration per public name across packages too: no package re-exports another
    package's name (``sim.pack`` was ``theory.pack``), and two packages never declare one name."""
    owners: dict[str, list[str]] = {}
    for name in LAZY:
        for public, target in _stub_names(name).items():
            assert target.startswith(name + "."), f"{name}.{public} re-exports {target}"
            owners.setdefault(public, []).append(name)
    shared = {n: p for n, p in owners.items() if len(p) > 1}
    assert not shared, f"one name, two packages: {shared}"


def test_input_error_is_public_and_import_is_light():
    import retcon
    from retcon.errors import InputError

    assert retcon.InputError is InputError
    code = "import sys, retcon; print(sorted(m for m in ('numpy', 'jax', 'sympy') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]", f"`import retcon` loaded {out.strip()}"


def _private_imports(path: Path, source: str | None = None) -> list[str]:
    """Imports in ``path`` (or in ``source``, read as that file) of another top-level package's
    private module."""
    parts = path.relative_to(REPO).parts
    # The command lines (retcon.commands) sit at the top layer, off the packages' import path:
    # they drive each package through its public names, like any user. Only retcon's own base
    # modules are theirs.
    own = parts[0]
    found = []
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text)):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        bad = [
            m
            for m in modules
            if m.split(".")[0] in TOP_LEVEL
            and m.split(".")[0] != own
            and any(p.startswith("_") for p in m.split("."))
        ]
        if bad:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {bad[0]}")
    return found


def test_no_package_imports_another_packages_private_modules():
    """Packages talk through public names only (tests, and the benchmarks that time private
    stages from a clone, may reach inside)."""
    files = [p for top in TOP_LEVEL if top != "benchmarks" for p in (REPO / top).rglob("*.py")]
    assert files
    found = [f for p in files for f in _private_imports(p)]
    assert not found, "private imports across packages:\n" + "\n".join(found)
    # no exemption for a command line, not even for the package it drives
    theory_cli = REPO / "retcon" / "commands" / "theory.py"
    assert _private_imports(theory_cli, "from theory._checks import check_model\n") != []
    assert _private_imports(theory_cli, "from theory import check_model\n") == []
    assert _private_imports(theory_cli, "from sim._simulate import simulate_queries\n") != []


def test_every_package_ships_py_typed():
    for top in ("retcon", "theory", "sim", "oas", "paper_checks"):
        assert (REPO / top / "py.typed").is_file(), f"{top}/py.typed is missing"


def test_help_lists_every_command_without_importing_jax():
    code = (
        "import sys, io, contextlib\n"
        "from retcon.cli import build_parser\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    build_parser().print_help()\n"
        "print(buf.getvalue())\n"
        "print('JAX_LOADED' if 'jax' in sys.modules else 'JAX_ABSENT')\n"
        "print('NUMPY_LOADED' if 'numpy' in sys.modules else 'NUMPY_ABSENT')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    for command in COMMANDS:
        assert f"    {command}" in out, f"`retcon --help` does not list {command!r}"
    assert "JAX_ABSENT" in out, (
        "building the CLI parser imported JAX; keep heavy imports inside run()"
    )
    assert "NUMPY_ABSENT" in out, (
        "building the CLI parser imported numpy; `retcon --help` needs none of it"
    )


def test_version_option_prints_the_package_version(capsys):
    """`retcon --version` reads the version only when asked, and prints it on stdout."""
    import retcon
    from retcon.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"retcon {retcon.__version__}\n"
