"""Imports run one way: down the layers of docs/architecture.md, never up.

An AST walk over every ``.py`` of the in-tree packages (as ``tests/test_public_api.py`` does for
private imports). It reads every import, at module level or inside a function, relative ones
resolved, and the string imports of our own packages: ``importlib.import_module("...")``,
``__import__``, a ``need("pkg", ...)`` helper and the module-name tables of the lazy ``__init__``
files (``_EXPORTS``, ``_MODULES``) and of the command line (``_COMMAND_MODULES``). A module may
import its own layer or a lower one; an import of a higher layer fails the test with the file and
line. ``test_the_checker_fails_on_a_planted_upward_import`` feeds the checker made-up sources, so
the test provably can fail. Inside ``paper_checks`` the same walk checks its own layers (foundations,
``rules``, ``tables``, ``claims``, ``report``, ``studies``, the runner; issue 45), with planted
upward imports of its own.
"""

import ast
import functools
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOP_LEVEL = ("retcon", "theory", "sim", "oas", "paper_checks", "experiments", "benchmarks")

# Bottom to top (docs/architecture.md). The benchmarks (run from a clone, not installed) sit on
# top of everything, the command line's dispatcher included.
BASE, THEORY, SIM, OAS, OAS_REAL, TOP, CLI, DISPATCH, BENCH = range(9)
NAMES = {
    BASE: "retcon base",
    THEORY: "theory",
    SIM: "sim",
    OAS: "oas",
    OAS_REAL: "oas.real",
    TOP: "paper_checks / experiments",
    CLI: "CLI",
    DISPATCH: "CLI dispatcher",
    BENCH: "benchmarks",
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
    if parts[0] == "retcon" and len(parts) > 1 and parts[1] in ("cli", "__main__"):
        return DISPATCH  # the dispatcher registers the command lines: nothing below imports it
    if parts[0] == "retcon" and len(parts) > 1 and parts[1] == "commands":
        return CLI  # every command line in retcon.commands and their plumbing (``common``)
    if parts[0] == "retcon":
        return BASE
    if parts[0] == "benchmarks":
        return BENCH
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
    # the `__init__.pyi` stubs too: their relative imports are what `attach_stub` loads
    return sorted(
        p for top in TOP_LEVEL for ext in ("py", "pyi") for p in (REPO / top).rglob(f"*.{ext}")
    )


def test_every_module_has_a_layer():
    files = _files()
    assert len(files) > 50
    for path in files:
        assert layer_of(module_name(path)) is not None, path


def test_no_module_imports_a_layer_above_its_own():
    """docs/architecture.md: no upward import, not even inside a function or as a string."""
    found = []
    for path in _files():
        for hit in upward_imports(_tree(path), module_name(path), path.stem == "__init__"):
            found.append(f"{path.relative_to(REPO)}:{hit}")
    assert not found, "upward imports:\n" + "\n".join(found)


def test_known_exceptions_are_still_needed():
    """An entry of ``KNOWN`` whose import is gone must be deleted (the list only shrinks)."""
    for module, target in KNOWN:
        path = REPO / (module.replace(".", "/") + ".py")
        imports = [m for _, m in imported_modules(_tree(path), module, False)]
        assert any(m == target or m.startswith(target + ".") for m in imports), (module, target)


def test_command_lines_live_in_retcon_commands():
    """The command lines are off the packages' import path: no package holds a ``cli.py`` or a
    ``*_cli.py`` (they are modules of ``retcon.commands``), and no package ``__init__`` below the
    CLI layer imports ``retcon.commands`` or ``retcon.cli``."""
    stray = [
        str(p.relative_to(REPO))
        for p in _files()
        if (p.stem == "cli" or p.stem.endswith("_cli")) and p != REPO / "retcon" / "cli.py"
    ]
    assert not stray, stray
    assert layer_of("retcon.commands.sim_worker") == CLI
    assert layer_of("retcon.cli") == layer_of("retcon.__main__") == DISPATCH
    assert layer_of("sim.cli") == SIM  # a module named cli inside a package is no exemption


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
        ("oas", "_EXPORTS = {'run': 'retcon.commands.oas'}\n", "retcon.commands.oas"),
        ("sim._made_up", "from retcon.commands import sim\n", "retcon.commands.sim"),
        ("paper_checks._made_up", "import retcon.commands\n", "retcon.commands"),
        ("retcon", "def f():\n    import benchmarks\n", "benchmarks"),
        ("retcon.cli", "import benchmarks\n", "benchmarks"),
        ("retcon.errors", "from retcon.cli import add_common\n", "retcon.cli"),
        ("retcon.commands.sim", "def f():\n    from retcon.cli import emit\n", "retcon.cli"),
        ("retcon.commands.common", "from retcon import cli\n", "retcon.cli"),
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
        ("retcon.commands.oas", "from retcon.commands import real\nimport paper_checks\n"),
        ("benchmarks._made_up", "import sim\nimport oas.real\nfrom retcon.cli import main\n"),
        ("oas._made_up", "import numpy\nimport importlib\nimportlib.import_module('sklearn')\n"),
    ],
)
def test_the_checker_passes_downward_imports(module, source):
    assert upward_imports(source, module) == []


# The layers inside ``paper_checks`` (docs/architecture.md), bottom to top: its loose modules
# (types, config, curves, effects, published tables, the operating-characteristics engine, the
# LoCoMo evaluation), then one sub-package per layer, then the runner (``_run``) and the package's
# own ``__init__`` (its public names come from every layer).
PC_FOUNDATIONS, PC_RULES, PC_TABLES, PC_CLAIMS, PC_REPORT, PC_STUDIES, PC_RUNNER = range(7)
PC_SUBPACKAGES = {
    "rules": PC_RULES,
    "tables": PC_TABLES,
    "claims": PC_CLAIMS,
    "report": PC_REPORT,
    "studies": PC_STUDIES,
}
PC_NAMES = {
    PC_FOUNDATIONS: "foundations",
    PC_RULES: "rules",
    PC_TABLES: "tables",
    PC_CLAIMS: "claims",
    PC_REPORT: "report",
    PC_STUDIES: "studies",
    PC_RUNNER: "runner",
}


def paper_checks_layer(module: str) -> int | None:
    """The layer of a module inside ``paper_checks`` (``None`` outside it)."""
    parts = module.split(".")
    if parts[0] != "paper_checks":
        return None
    if len(parts) == 1 or parts[1] == "_run":
        return PC_RUNNER
    return PC_SUBPACKAGES.get(parts[1], PC_FOUNDATIONS)


def paper_checks_upward(
    source: str | ast.Module, module: str, is_package: bool = False
) -> list[str]:
    """The imports in ``source`` (module level or inside a function) of a ``paper_checks`` layer
    above ``module``'s, as ``line: module -> target``."""
    own = paper_checks_layer(module)
    assert own is not None, module
    bad = []
    for line, target in imported_modules(source, module, is_package):
        layer = paper_checks_layer(target)
        if layer is not None and layer > own:
            bad.append(f"{line}: {module} ({PC_NAMES[own]}) imports {target} ({PC_NAMES[layer]})")
    return bad


def _paper_checks_files() -> list[Path]:
    return [p for p in _files() if p.relative_to(REPO).parts[0] == "paper_checks"]


def test_paper_checks_layers_import_only_downward():
    """Inside ``paper_checks``: foundations < rules < tables < claims < report < studies < runner.
    A module imports its own layer or a lower one, at module level and inside functions alike."""
    found = []
    for path in _paper_checks_files():
        for hit in paper_checks_upward(_tree(path), module_name(path), path.stem == "__init__"):
            found.append(f"{path.relative_to(REPO)}:{hit}")
    assert not found, "upward imports inside paper_checks:\n" + "\n".join(found)


def test_paper_checks_layers_are_the_documented_ones():
    """Every sub-package of ``paper_checks`` has a layer and a docstring that says what it holds,
    and the runner and the public stub sit on top."""
    packages = sorted(
        p.parent.relative_to(REPO / "paper_checks").parts[0]
        for p in (REPO / "paper_checks").glob("*/__init__.py")
    )
    assert packages == sorted(PC_SUBPACKAGES), packages
    for init in (REPO / "paper_checks").rglob("__init__.py"):
        doc = ast.get_docstring(_tree(init))
        assert doc and len(doc.split()) > 20, init
    assert paper_checks_layer("paper_checks") == PC_RUNNER
    assert paper_checks_layer("paper_checks._run") == PC_RUNNER
    assert paper_checks_layer("paper_checks.operating") == PC_FOUNDATIONS
    assert paper_checks_layer("paper_checks.studies.scripts._args") == PC_STUDIES
    assert paper_checks_layer("oas") is None


def test_paper_checks_has_no_flat_list_of_more_than_12_modules():
    """Issue 45: no folder of ``paper_checks`` holds more than 12 modules."""
    for folder in [
        REPO / "paper_checks",
        *(p.parent for p in (REPO / "paper_checks").rglob("*/__init__.py")),
    ]:
        modules = sorted(p.name for p in folder.glob("*.py"))
        assert len(modules) <= 12, (folder, modules)


@pytest.mark.parametrize(
    ("module", "source", "target"),
    [
        ("paper_checks._curves", "from paper_checks.rules._grades import combine\n", "rules"),
        (
            "paper_checks.operating",
            "def f():\n    from paper_checks.rules import _reversal\n",
            "rules",
        ),
        (
            "paper_checks.rules._made_up",
            "from paper_checks.claims._base import attempt\n",
            "claims",
        ),
        ("paper_checks.rules._made_up", "from ..tables import _design\n", "tables"),
        ("paper_checks.tables._made_up", "def f():\n    from ..claims import _sources\n", "claims"),
        (
            "paper_checks.claims._made_up",
            "from paper_checks.report._report import plain\n",
            "report",
        ),
        ("paper_checks.report._made_up", "from paper_checks.studies import _timeline\n", "studies"),
        (
            "paper_checks.studies._made_up",
            "def f():\n    from paper_checks._run import run_checks\n",
            "runner",
        ),
        ("paper_checks.studies.scripts._made_up", "from paper_checks import CHECKS\n", "runner"),
    ],
)
def test_the_paper_checks_checker_fails_on_a_planted_upward_import(module, source, target):
    """The sub-layer checker is not vacuous: each planted upward import is reported."""
    bad = paper_checks_upward(source, module)
    assert any(b.endswith(f"({target})") for b in bad), bad


@pytest.mark.parametrize(
    ("module", "source"),
    [
        (
            "paper_checks.rules._made_up",
            "from paper_checks._loco import loco_evaluate\nimport oas\n",
        ),
        ("paper_checks.claims._made_up", "from ..tables._design import paper_tables\n"),
        ("paper_checks._run", "from paper_checks.studies import _timeline\n"),
        ("paper_checks.studies._made_up", "def f():\n    from paper_checks.report import _html\n"),
    ],
)
def test_the_paper_checks_checker_passes_downward_imports(module, source):
    assert paper_checks_upward(source, module) == []


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

    importlib.import_module("paper_checks.claims._sources")  # loads as it is
    monkeypatch.delattr(sim._simulate, "simulate_queries")
    monkeypatch.delitem(sys.modules, "paper_checks.claims._sources")
    with pytest.raises(ImportError, match="simulate_queries"):
        importlib.import_module("paper_checks.claims._sources")


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (imports for the type checker
    only, which never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If):
                test = child.test
                name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
                if name == "TYPE_CHECKING":
                    stack.extend(child.orelse)
                    continue
            stack.append(child)


def file_imports(sources: Mapping[str, str | ast.Module]) -> dict[str, set[str]]:
    """The file-level import graph: ``module -> {modules it imports}``, function-level imports
    included, package ``__init__`` files left out (a package re-exports its files; an import of
    the package is not an edge to any one of them). ``sources`` maps module names to their text or
    tree; a name ending in ``.__init__`` is a package."""
    modules = {m for m in sources if not m.endswith(".__init__")}
    graph: dict[str, set[str]] = {}
    for module in modules:
        source = sources[module]
        tree = ast.parse(source) if isinstance(source, str) else source
        runtime = ast.Module(body=[], type_ignores=[])
        runtime.body = [
            n for n in _runtime_nodes(tree) if isinstance(n, ast.Import | ast.ImportFrom)
        ]
        targets = {t for _, t in imported_modules(runtime, module, False)}
        graph[module] = {t for t in targets if t in modules and t != module}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def _module_key(path: Path) -> str:
    name = module_name(path)
    return f"{name}.__init__" if path.stem == "__init__" else name


def test_no_file_level_import_cycle():
    """Issue 33: no two files import each other, directly or around a loop, even when one side
    hides the import inside a function. Move the shared piece down instead."""
    sources = {_module_key(p): _tree(p) for p in _files() if p.suffix == ".py"}
    cycles = import_cycles(file_imports(sources))
    assert not cycles, "file-level import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_hidden_cycle():
    """The finder is not vacuous: a cycle hidden by a function-level import is found, a
    type-checking-only import and an import of the package are not edges."""
    sources = {
        "oas.__init__": "from ._a import f\nfrom ._b import g\n",
        "oas._a": "from ._b import g\n",
        "oas._b": "def g():\n    from ._a import f\n",
        "oas._c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._d import h\n",
        "oas._d": "from ._c import x\nimport oas\n",
    }
    assert import_cycles(file_imports(sources)) == [["oas._a", "oas._b"]]


def _architecture_listing() -> set[str]:
    """The files docs/architecture.md lists under "Every source file, by layer": lines
    ``- <layer>, `<folder>/`: `a.py`, `b.py``."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Every source file, by layer", 1)[1].split("\n## ", 1)[0]
    listed = set()
    for line in section.splitlines():
        if line.startswith("- ") and "`: " in line:
            folder = line.split("`")[1]
            listed |= {folder + name for name in line.split("`: ", 1)[1].strip("`").split("`, `")}
    return listed


def test_architecture_names_every_source_file():
    """Issue 45: docs/architecture.md names every source file of the packages, experiments/ and
    benchmarks/, and no file that is gone."""
    listed = _architecture_listing()
    present = {str(p.relative_to(REPO)) for p in _files() if p.suffix == ".py"}
    assert not present - listed, f"not in docs/architecture.md: {sorted(present - listed)}"
    assert not listed - present, f"listed but absent: {sorted(listed - present)}"


def _module_of_import(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> str:
    if isinstance(node, ast.Import):
        return node.names[0].name
    base = node.module or ""
    if node.level:
        anchor = (module if is_package else module.rpartition(".")[0]).split(".")
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    return base


def repeated_imports(source: str | ast.Module, module: str, is_package: bool = False) -> list[str]:
    """Imports inside a function of a module that ``source`` already imports at module level
    (``line: statement``): load it once, at the top."""
    tree = ast.parse(source) if isinstance(source, str) else source
    top = {
        _module_of_import(n, module, is_package)
        for n in tree.body
        if isinstance(n, ast.Import | ast.ImportFrom)
    }
    inner = {
        id(n): n
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        for n in ast.walk(fn)
        if isinstance(n, ast.Import | ast.ImportFrom)
    }
    return [
        f"{n.lineno}: {ast.unparse(n)}"
        for n in sorted(inner.values(), key=lambda n: n.lineno)
        if _module_of_import(n, module, is_package) in top
    ]


# Function-level imports of a lazy package the file also imports at the top, kept inside the
# function because the name they load pulls in JAX (the package's stub loads per name).
LAZY_FOR_JAX = {
    ("sim/kernel/_draws.py", "from theory import sample_lengths"),  # the numpy path runs without
    ("oas/_identify.py", "from theory import PACKINGS, pack"),  # oas predicts without JAX
}


def test_no_function_level_import_repeats_a_module_level_one():
    """Issue 45: a module imported at the top of a file is not imported again inside one of its
    functions (48 did at f390c91), the JAX-loading names of ``LAZY_FOR_JAX`` aside."""
    found = []
    for path in _files():
        if path.suffix != ".py":
            continue
        rel = str(path.relative_to(REPO))
        for hit in repeated_imports(_tree(path), module_name(path), path.stem == "__init__"):
            if (rel, hit.split(": ", 1)[1]) not in LAZY_FOR_JAX:
                found.append(f"{rel}:{hit}")
    assert not found, "function-level imports repeating a module-level one:\n" + "\n".join(found)
    for rel, statement in LAZY_FOR_JAX:  # the exceptions only shrink
        hits = repeated_imports(_tree(REPO / rel), module_name(REPO / rel))
        assert any(h.endswith(": " + statement) for h in hits), (rel, statement)


def test_the_repeat_finder_finds_a_planted_repeat():
    source = (
        "import os\nfrom theory import crossover\n"
        "def f():\n    import os\n    from theory import grid_crossover\n    import json\n"
    )
    assert [h.split(": ")[1] for h in repeated_imports(source, "sim._made_up")] == [
        "import os",
        "from theory import grid_crossover",
    ]
    assert repeated_imports("from . import _a\ndef f():\n    from ._a import g\n", "oas._b") == []
