"""retcon: retain or consolidate, under a token budget.

The distribution's own package holds only the command line and the plumbing the scientific
packages share (input errors, atomic output, run sidecars, grouped bootstrap). The science lives in
the top-level packages ``theory`` (sympy, MODEL §4-6), ``sim`` (JAX Monte Carlo, §2-7),
``oas`` (the router, §8, and real paired data, §9), ``experiments`` and ``paper_checks``.
"""

from retcon.lazy import attach_stub

# Every public name is declared once, in __init__.pyi, and loads on first use.
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
