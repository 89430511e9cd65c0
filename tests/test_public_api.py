"""Every public name of every package resolves, and the command line lists every command.

Thin public ``__init__`` files with ``__all__``; one test imports every public name.
Each ``__init__`` declares its names three times, and they must agree: a literal ``__all__`` (what
``from pkg import *`` and readers see), an ``if TYPE_CHECKING:`` block of explicit imports (what
type checkers and editors see) and the lazy table that ``retcon.lazy`` serves at run time (so that
``retcon --help`` imports no JAX or sympy).
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
    "retcon.bench",
]
TOP_LEVEL = ("retcon", "theory", "sim", "oas", "paper_checks", "experiments")
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


def _literal_all(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            assert isinstance(node.value, ast.List), "__all__ must be a literal list"
            value = ast.literal_eval(node.value)
            assert all(isinstance(n, str) for n in value)
            return value
    raise AssertionError("no __all__")


def _type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """Public name -> ``module:attribute`` from the ``if TYPE_CHECKING:`` block."""
    names: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            assert isinstance(stmt, ast.ImportFrom), ast.unparse(stmt)
            for alias in stmt.names:
                # `import x as x` is the explicit re-export form type checkers honour.
                assert alias.asname is not None, f"{ast.unparse(stmt)}: write `as {alias.name}`"
                names[alias.asname] = f"{stmt.module}:{alias.name}"
    return names


def _lazy_table(module) -> dict[str, str]:
    """Public name -> ``module:attribute`` as ``retcon.lazy`` resolves it at run time."""
    table = {}
    for name, target in getattr(module, "_EXPORTS", {}).items():
        mod, _, attr = target.partition(":")
        table[name] = f"{mod}:{attr or name}"
    for name, target in getattr(module, "_MODULES", {}).items():
        parent, _, sub = target.rpartition(".")
        table[name] = f"{parent}:{sub}"
    return table


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_resolves(name):
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list)
    missing = [n for n in module.__all__ if getattr(module, n, None) is None]
    assert not missing, f"{name}.__all__ names that do not resolve: {missing}"


@pytest.mark.parametrize("name", PACKAGES)
def test_all_type_checking_and_lazy_table_agree(name):
    """A name added in one of the three places and forgotten in another fails here."""
    module = importlib.import_module(name)
    tree = _init_tree(name)
    declared = _literal_all(tree)
    assert declared == module.__all__
    assert len(set(declared)) == len(declared), f"{name}.__all__ repeats a name"
    checking = _type_checking_imports(tree)
    lazy = _lazy_table(module)
    assert checking == lazy, f"{name}: TYPE_CHECKING imports and the lazy table differ"
    eager = {n for n in declared if n in vars(module)}
    assert set(declared) == eager | set(lazy), (
        f"{name}.__all__ vs the names the package defines: "
        f"undeclared {sorted(eager | set(lazy) - set(declared))}, "
        f"unresolved {sorted(set(declared) - eager - set(lazy))}"
    )
    for public, target in lazy.items():
        mod, _, attr = target.partition(":")
        assert getattr(module, public) is getattr(importlib.import_module(mod), attr)


def test_input_error_is_public_and_import_is_light():
    import retcon
    from retcon.errors import InputError

    assert retcon.InputError is InputError
    code = "import sys, retcon; print(sorted(m for m in ('numpy', 'jax', 'sympy') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]", f"`import retcon` loaded {out.strip()}"


def _private_imports(path: Path) -> list[str]:
    """Imports in ``path`` of another top-level package's private module."""
    own = path.relative_to(REPO).parts[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
    """Packages talk through public names only (tests may reach inside)."""
    files = [p for top in TOP_LEVEL for p in (REPO / top).rglob("*.py")]
    assert files
    found = [f for p in files for f in _private_imports(p)]
    assert not found, "private imports across packages:\n" + "\n".join(found)


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
