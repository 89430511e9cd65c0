"""Lazy public names for package ``__init__`` files (PEP 562).

``retcon --help`` imports every package's ``cli`` module, and with it the package; a package
whose public names load on first use keeps that import free of sympy, scipy and JAX.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(
    package: str, attributes: dict[str, str], modules: dict[str, str] | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package``.

    Args:
      package: the package's name, for the error message.
      attributes: public name -> private module that defines it, or ``"module:name"`` when the
        module calls it by another name.
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
