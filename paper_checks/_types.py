"""The result of one claim check, and the small value types the checks pass around.

A check measures a figure with its confidence interval on some data, then hands the numbers to a
separate, pure verdict function (``paper_checks.rules``); nothing here decides a verdict.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

PASS = "PASS"
PARTIAL = "PARTIAL"
FAIL = "FAIL"
INCONCLUSIVE = "INCONCLUSIVE"
SKIPPED = "SKIPPED"
#: The rows cannot test the claim (an outcome without variance, too few groups): never PASS,
#: never FAIL (``paper_checks.rules._gates``).
NOT_TESTABLE = "NOT TESTABLE"
VERDICTS = (PASS, PARTIAL, FAIL, INCONCLUSIVE, NOT_TESTABLE, SKIPPED)


class Estimate(NamedTuple):
    """A point estimate with its two-sided interval (``lower <= point <= upper`` when finite).

    A value known exactly (theory) has ``lower == point == upper``; an undefined one is NaN.
    """

    point: float
    lower: float
    upper: float

    @classmethod
    def exact(cls, value: float) -> Estimate:
        v = float(value)
        return cls(v, v, v)

    @classmethod
    def missing(cls) -> Estimate:
        return cls(float("nan"), float("nan"), float("nan"))

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.point))

    def fmt(self, scale: float = 1.0, digits: int = 3) -> str:
        """``0.123 [0.100, 0.150]``; ``n/a`` when undefined; decimals shrink as magnitudes grow."""
        if not self.defined:
            return "n/a"
        p, lo, hi = (scale * x for x in self)
        finite = [abs(x) for x in (p, lo, hi) if np.isfinite(x)]
        big = max(finite)
        d = digits if big < 10 else (min(digits, 1) if big < 100 else 0)

        def f(x):
            return (
                f"{x:.{d}f}" if np.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")
            )

        if lo == p == hi or not (np.isfinite(lo) or np.isfinite(hi)):
            return f(p)
        return f"{f(p)} [{f(lo)}, {f(hi)}]"


class OperatorCurve(NamedTuple):
    """One operator's utility difference against retention over a budget grid.

    Fields (arrays of shape ``(n_budgets,)`` unless said otherwise):
      budgets: tokens, increasing.
      delta: ``dU_{B,o} = U_B(o) - U_B(ret)`` (MODEL §3).
      lower, upper: pointwise confidence band of ``delta`` (equal to ``delta`` for theory).
      coverage, replacement: the two effects of MODEL §4 (NaN where the source does not give them).
      crossover: Estimate of the crossover budget ``B*_o`` (tokens; NaN when there is none).
      status: ``unique``, ``none`` or ``multiple`` (MODEL §6.4).
    """

    budgets: np.ndarray
    delta: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    coverage: np.ndarray
    replacement: np.ndarray
    crossover: Estimate
    status: str


class SourceCurves(NamedTuple):
    """All operators' curves from one data source (a theory model, a sim scenario, a real dataset).

    Fields:
      name: short label used in tables (``sim:locomo-like``, ``locomo:lexical``).
      data: what was used, for the report's data column.
      operators: ``{operator: OperatorCurve}`` over the same budgets.
      evidence_length: mean raw evidence length ``E[L]`` in tokens (NaN when unknown).
      kind: ``theory``, ``sim`` or ``real``.
      group_delta: ``(G, n_operators, n_budgets)`` the per-group ``dU`` curves the intervals rest
        on (docs/statistics.md), operators in ``operators`` order; None for theory and the sim
        presets' curves.
    """

    name: str
    data: str
    operators: dict
    evidence_length: float
    kind: str
    group_delta: np.ndarray | None = None


class ClaimResult(NamedTuple):
    """One claim of the paper, checked.

    Fields:
      claim_id: ``"1"`` .. ``"9"``, as numbered in docs/paper-checks.md.
      claim: the claim, quoted.
      measured: the headline figure (a number; what it is is in ``details["headline"]``), or None.
      ci: the headline figure's 95% interval ``(lower, upper)``, or None.
      paper_figure: what the paper reports (text), ``"-"`` when it gives no number.
      data: the data the figure was measured on.
      verdict: PASS, PARTIAL, FAIL, INCONCLUSIVE or SKIPPED, computed by the claim's verdict
        function from the real-data units (``paper_checks.rules._grades.RULES``).
      details: everything else (per-source numbers, the verdict's reason, a one-line ``summary``).
    """

    claim_id: str
    claim: str
    measured: float | None
    ci: tuple[float, float] | None
    paper_figure: str
    data: str
    verdict: str
    details: dict[str, Any]


class Verdict(NamedTuple):
    """A verdict and the reason the verdict function gives for it."""

    verdict: str
    reason: str
