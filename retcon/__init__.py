"""retcon: retain or consolidate, under a token budget.

The distribution's own package holds only the command line and the plumbing the scientific
packages share (input errors, atomic output, run sidecars, grouped bootstrap). The science lives in
the top-level packages ``theory`` (sympy, MODEL §4-6), ``sim`` (JAX Monte Carlo, §2-7),
``oas`` (the router, §8, and real paired data, §9), ``experiments`` and ``paper_checks``.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from retcon.errors import InputError

try:
    __version__ = _version("retcon")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"

__all__ = ["InputError", "__version__"]
