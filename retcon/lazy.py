"""Lazy public names for package ``__init__`` files, declared once in the package's ``__init__.pyi``.

A package lists each public name once, as an explicit re-export in its stub
(``from ._crossover import crossover as crossover``; a public submodule as
``from . import symbolic as symbolic``). Type checkers and editors read the stub; at run time
`attach_stub` reads the same stub and serves the names on first use (PEP 562), the way
``lazy_loader.attach_stub`` does. Laziness keeps ``retcon crossover``
free of JAX and sympy and lets a deployed agent load an ``oas`` router without JAX
(docs/architecture.md gives the measured start-up times).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path


def attach_stub(
    package: str, filename: str
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """Return ``(__getattr__, __dir__, __all__)`` for ``package`` from its ``__init__.pyi``.

    Usage, the only code of a package ``__init__.py``:
    ``__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)``.

    Args:
      package: the package's name (``__name__``).
      filename: its ``__init__.py`` (``__file__``); the stub sits beside it.

    Returns:
      ``__getattr__`` importing a name's module on first use, ``__dir__``, and ``__all__``: the
      names in the stub's order.

    Raises:
      ValueError: the stub holds anything but relative ``from`` imports written in the explicit
        re-export form ``import name as name`` (a bug of the package, not of a user's input).
    """
    import ast

    stub = Path(filename).with_suffix(".pyi")
    attributes: dict[str, str] = {}
    modules: dict[str, str] = {}
    names: list[str] = []
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if not isinstance(node, ast.ImportFrom) or node.level != 1:
            raise ValueError(f"{stub}:{node.lineno}: only `from .module import name as name`")
        for alias in node.names:
            if alias.asname != alias.name:  # type checkers re-export only `name as name`
                raise ValueError(f"{stub}:{node.lineno}: write `{alias.name} as {alias.name}`")
            names.append(alias.name)
            if node.module:
                attributes[alias.name] = f"{package}.{node.module}:{alias.name}"
            else:
                modules[alias.name] = f"{package}.{alias.name}"
    getattr_, dir_ = lazy_exports(package, attributes, modules)
    return getattr_, dir_, names


def lazy_exports(
    package: str, attributes: dict[str, str], modules: dict[str, str] | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package``.

    Args:
      package: the package's name, for the error message.
      attributes: public name -> ``"module:name"``, the module that defines it and its name there.
      modules: public name -> a submodule exposed as a whole (``theory.symbolic``).
    """
    modules = modules or {}

    def __getattr__(name: str):
        if name in modules:
            return importlib.import_module(modules[name])
        if name in attributes:
            module, _, attr = attributes[name].partition(":")
            return getattr(importlib.import_module(module), attr or name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*attributes, *modules})

    return __getattr__, __dir__
