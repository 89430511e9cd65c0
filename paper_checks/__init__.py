"""Paper checks: the paper's claims, one function each, measured with CIs and given a computed verdict.

``run_checks`` measures every claim (theory, sim, OAS, LoCoMo) and ``write_run`` writes
``REPORT.md``, ``report.json`` and the figures; ``retcon paper-checks`` does both. Each claim's
verdict comes from a pure verdict function (``verdict_*``) of the measured real-data numbers
(``RULES``: simulation shows the mechanism, real data decides), so the logic is tested on
constructed numbers where the claim holds, fails, holds in part, or cannot be decided. Each rule's
error rates at the data's group count (false PASS, power, false FAIL) come from the public module
``paper_checks.operating``.

References: MODEL §3-9; docs/paper-checks.md.
"""

from retcon.lazy import attach_stub

# Every public name is declared once, in __init__.pyi, and loads on first use.
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
