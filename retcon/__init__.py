"""retcon: retain or consolidate, under a token budget.

The distribution's own package holds only the command line and the plumbing the scientific
packages share (input errors, atomic output, run sidecars, grouped bootstrap). The science lives in
the top-level packages ``theory`` (sympy, MODEL §4-6), ``sim`` (JAX Monte Carlo, §2-7),
``oas`` (the router, §8, and real paired data, §9), ``experiments`` and ``paper_checks``.
"""

from typing import TYPE_CHECKING

from retcon.errors import InputError
from retcon.lazy import lazy_exports

if TYPE_CHECKING:
    from retcon._version import __version__ as __version__

# `__version__` reads the package metadata (importlib.metadata) only when asked for.
_EXPORTS = {"__version__": "retcon._version"}

__getattr__, _ = lazy_exports("retcon", _EXPORTS)

__all__ = ["InputError", "__version__"]
