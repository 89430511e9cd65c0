"""Imports run one way: down the layers of docs/architecture.md, never up.

An AST walk over every ``.py`` of the in-tree packages (as ``tests/test_public_api.py`` does for
private imports). It reads every import, at module level or inside a function, relative ones
resolved, and the string imports of our own packages: ``importlib.import_module("...")``,
``__import__``, a ``need("pkg", ...)`` helper and the module-name tables of the lazy ``__init__``
files (``_EXPORTS``, ``_MODULES``) and of the command line (``_COMMAND_MODULES``). A module may
import its own layer or a lower one; an import of a higher layer fails the test with the file and
line. ``test_the_checker_fails_on_a_planted_upward_import`` feeds the checker made-up sources, so
the test provably can fail.
"""

import ast
import functools
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOP_LEVEL = ("retcon", "theory", "sim", "oas", "paper_checks", "experiments")

# Bottom to top (docs/architecture.md).
BASE, THEORY, SIM, OAS, OAS_REAL, TOP, CLI = range(7)
NAMES = {
    BASE: "retcon base",
    THEORY: "theory",
    SIM: "sim",
    OAS: "oas",
    OAS_REAL: "oas.real",
    TOP: "paper_checks / experiments / retcon.bench",
    CLI: "CLI",
}

# Upward imports that another change removes; each names who removes it. Keep this empty.
KNOWN: set[tuple[str, str]] = set()

# Assignments whose string values are module names imported at run time.
_TABLES = ("_EXPORTS", "_MODULES", "_COMMAND_MODULES")
# Calls whose first argument is a module name imported at run time.
_IMPORTERS = ("import_module", "__import__", "need")


def layer_of(module: str) -> int | None:
    """The layer of an in-tree module (``None`` for third-party and standard-library modules)."""
    parts = module.split(".")
    if parts[0] not in TOP_LEVEL:
        return None
    last = parts[-1]
    if last in ("cli", "__main__") or last.endswith("_cli"):
        return CLI  # every package's command line sits on top, wherever it lives
    if parts[0] == "retcon":
        return TOP if len(parts) > 1 and parts[1] == "bench" else BASE
    if parts[0] == "oas":
        return OAS_REAL if len(parts) > 1 and parts[1] == "real" else OAS
    return {"theory": THEORY, "sim": SIM}.get(parts[0], TOP)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _strings(node: ast.AST) -> list[str]:
    """Module names in a lazy table: dict values or sequence items, ``"module:attr"`` allowed."""
    if isinstance(node, ast.Dict):
        items = node.values
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = node.elts
    else:
        return []
    return [
        n.value.partition(":")[0]
        for n in items
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


@functools.cache
def _tree(path: Path) -> ast.Module:
    """Each file parsed once per session (parsing is most of this file's time)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imported_modules(
    source: str | ast.Module, module: str, is_package: bool
) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``source`` (text or tree), the module ``module``."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    tree = ast.parse(source) if isinstance(source, str) else source
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            # `from pkg import sub` may import the submodule pkg.sub
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            arg = node.args[0] if node.args else None
            if name in _IMPORTERS and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.append((node.lineno, arg.value))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(
                isinstance(t, ast.Name) and t.id in _TABLES for t in targets
            ):
                found += [(node.lineno, m) for m in _strings(node.value)]
    return found


def upward_imports(source: str | ast.Module, module: str, is_package: bool = False) -> list[str]:
    """The imports in ``source`` of a layer above ``module``'s, as ``line: module -> target``."""
    own = layer_of(module)
    assert own is not None, module
    bad = []
    for line, target in imported_modules(source, module, is_package):
        layer = layer_of(target)
        if layer is None or layer <= own:
            continue
        if any(module == m and (target == t or target.startswith(t + ".")) for m, t in KNOWN):
            continue
        bad.append(f"{line}: {module} ({NAMES[own]}) imports {target} ({NAMES[layer]})")
    return bad


def _files() -> list[Path]:
    return sorted(p for top in TOP_LEVEL for p in (REPO / top).rglob("*.py"))


def test_every_module_has_a_layer():
    files = _files()
    assert len(files) > 50
    for path in files:
        assert layer_of(module_name(path)) is not None, path


def test_no_module_imports_a_layer_above_its_own():
    """docs/architecture.md: no upward import, not even inside a function or as a string."""
    found = []
    for path in _files():
        for hit in upward_imports(_tree(path), module_name(path), path.name == "__init__.py"):
            found.append(f"{path.relative_to(REPO)}:{hit}")
    assert not found, "upward imports:\n" + "\n".join(found)


def test_known_exceptions_are_still_needed():
    """An entry of ``KNOWN`` whose import is gone must be deleted (the list only shrinks)."""
    for module, target in KNOWN:
        path = REPO / (module.replace(".", "/") + ".py")
        imports = [m for _, m in imported_modules(_tree(path), module, False)]
        assert any(m == target or m.startswith(target + ".") for m in imports), (module, target)


def test_theory_imports_nothing_above_it():
    """Issue 22's check in words: ``theory`` imports nothing from ``sim``, ``oas`` or above."""
    for path in (REPO / "theory").rglob("*.py"):
        if layer_of(module_name(path)) == CLI:
            continue
        targets = [m for _, m in imported_modules(_tree(path), module_name(path), False)]
        assert not [m for m in targets if (layer_of(m) or BASE) > THEORY], path


@pytest.mark.parametrize(
    ("module", "source", "target"),
    [
        ("theory._made_up", "import sim\n", "sim"),
        ("theory._made_up", "def f():\n    from sim import pack\n", "sim.pack"),
        ("sim._made_up", "from oas import identify\n", "oas"),
        ("oas._made_up", "import importlib\nimportlib.import_module('oas.real')\n", "oas.real"),
        ("oas._made_up", "from .real import embed_texts\n", "oas.real"),
        ("oas._made_up", "run = need('paper_checks', 'run_checks')\n", "paper_checks"),
        ("oas", "_EXPORTS = {'run': 'oas.cli'}\n", "oas.cli"),
        ("retcon", "def f():\n    import retcon.bench\n", "retcon.bench"),
        ("retcon.errors", "from retcon.cli import add_common\n", "retcon.cli"),
        ("oas.real._made_up", "from paper_checks import run_all\n", "paper_checks"),
    ],
)
def test_the_checker_fails_on_a_planted_upward_import(module, source, target):
    """The checker is not vacuous: each planted upward import is reported."""
    bad = upward_imports(source, module, is_package="." not in module)
    assert any(f"imports {target} " in b for b in bad), bad


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("sim._made_up", "from theory import pack\nimport retcon.errors\n"),
        ("oas.real._made_up", "from oas import identify\nfrom sim import simulate\n"),
        ("oas.cli", "from oas.real import cli\nfrom retcon.cli import add_common\n"),
        ("retcon.bench._made_up", "import sim\nimport oas.real\n"),
        ("oas._made_up", "import numpy\nimport importlib\nimportlib.import_module('sklearn')\n"),
    ],
)
def test_the_checker_passes_downward_imports(module, source):
    assert upward_imports(source, module) == []


def _string_imports_of_our_packages(path: Path) -> list[str]:
    """``import_module("oas")``-style calls (not the lazy tables) that name an in-tree module."""
    found = []
    for node in ast.walk(_tree(path)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        arg = node.args[0]
        if (
            name in _IMPORTERS
            and isinstance(arg, ast.Constant)
            and isinstance(arg.value, str)
            and layer_of(arg.value) is not None
        ):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {name}({arg.value!r})")
    return found


def test_no_string_imports_of_our_own_packages():
    """Issue 22: `paper_checks` and everything else import our packages by name, not by string."""
    found = [f for p in _files() for f in _string_imports_of_our_packages(p)]
    assert not found, "string imports of in-tree packages:\n" + "\n".join(found)


def test_a_renamed_function_fails_paper_checks_at_import(monkeypatch):
    """A function paper_checks uses that is renamed away is an ImportError when its sources load
    (it used to become a silently skipped claim)."""
    import importlib
    import sys

    import sim._simulate

    importlib.import_module("paper_checks._sources")  # loads as it is
    monkeypatch.delattr(sim._simulate, "simulate_queries")
    monkeypatch.delitem(sys.modules, "paper_checks._sources")
    with pytest.raises(ImportError, match="simulate_queries"):
        importlib.import_module("paper_checks._sources")
