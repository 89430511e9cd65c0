"""Claims 1-4, the budget-dependent reversal: each claim's rule on per-group arrays and the
simulation of that same rule's error rates (one home per rule; ``paper_checks.rules._grades``).

* Claims 1 and 4 (``reversal_verdict``), the primary contrast, stated before data
  (docs/statistics.md, "Each claim's primary contrast"): for every distinct consolidation
  operator ``k``, ``dU_k`` at the design's tightest budget above 0 and at its loosest below 0.
  The ``2K`` one-sided cells are tested together by the single-step max-T sign-flip test over
  the per-conversation values (``retcon.inference.max_t_sign_flip``: all ``2**G`` sign patterns
  for ``G <= 16``), which keeps the family-wise error <= ``ALPHA`` whatever the cells'
  correlation and counts identical operators once (their cells move together). An operator
  reverses (grade 2) when both its cells reject. If no operator reverses, each has a true-null
  cell, and a grade 2 needs that cell to reject: probability <= ``ALPHA`` over all operators
  together (strong control of the max-T test); within an operator both cells must reject (an
  intersection-union test, Berger 1982), so nothing is spent between the two budgets.
* Claim 2 (``tight_gain_verdict``): every distinct operator's gain at every budget, max-T
  sign-flip for the direction; the largest mean gain's 90% interval against the paper's 48
  points (``grade_size``: two one-sided tests at 5% each).
* Claim 3 (``loose_verdict``), the primary contrast, stated before data (docs/statistics.md):
  retention's margin ``U(ret) - U(o)`` over every operator at the loosest budget, per
  conversation, judged by exact sign-flip tests only (each exact for any conversations whose
  margins are symmetric about their mean, whatever their spreads: an outlier conversation
  cannot break the level). An operator holds (2) when the one-sided sign-flip test rejects
  ``margin <= PAPER_LOOSE_MARGIN[0] / 2`` (4 points, the magnitude null world) at ``ALPHA``;
  the claim needs every operator, so by the intersection-union principle (Berger 1982) its
  false PASS in any world where some margin is <= 4 points is <= ``ALPHA`` with no correction.
  An operator fails (0) when the max-T sign-flip test over the operators rejects
  ``margin >= 8 points`` (the paper's low end) for it at ``ALPHA``: family-wise over the
  operators, so a false 0 at the paper's margins happens at most ``ALPHA`` of the time per
  source. The claim FAILs when any operator fails.

Each ``*_oc`` runs the same function in worlds with the data's spread at its group count
(``paper_checks.operating``): null worlds where the claim is false at its boundary, a true world
at the paper's effect (MODEL §11, ``paper_checks._effects``) and a half-size world.

References: MODEL §6.1-6.3; Westfall & Young (1993), Resampling-Based Multiple Testing;
Berger (1982), Technometrics 24(4).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from paper_checks._curves import t_estimate
from paper_checks._effects import paper_curves
from paper_checks._types import FAIL, Verdict
from paper_checks.operating import N_DATASETS, operating_characteristics
from paper_checks.rules._grades import (
    ALPHA,
    NO,
    POINT,
    SIGNIFICANT,
    SIZE_LEVEL,
    combine,
    grade_size,
    halved_oc,
)
from retcon.inference import max_t_sign_flip


class EndpointTest(NamedTuple):
    """Claims 1 and 4 on one reader's per-group curves.

    Fields: ``gain`` ``(K,)`` max-T adjusted p-values of ``dU_k > 0`` at the tightest budget;
    ``loss`` ``(K,)`` of ``dU_k < 0`` at the loosest; ``grades`` ``(K,)``: 2 when both reject at
    ``alpha``, 1 when the mean curve is above 0 at the tightest and below 0 at the loosest
    without both rejecting, 0 otherwise; ``point`` ``(K, m)`` the mean curves (budgets in the
    given order); ``exact``: every sign pattern enumerated.
    """

    gain: np.ndarray
    loss: np.ndarray
    grades: np.ndarray
    point: np.ndarray
    exact: bool


def endpoint_test(budgets, group_delta, *, alpha: float = ALPHA) -> EndpointTest:
    """The reversal rule (module docstring) on ``(G, K, m)`` per-group ``dU`` (NaN: no data).

    Args:
      budgets: ``(m,)`` budgets, any order (the tightest and loosest are found here), ``m >= 2``.
      group_delta: ``(G, K, m)`` per-group ``dU_k(b)`` of the distinct operators.
      alpha: the family-wise error of a false reversal.

    Returns:
      ``EndpointTest``.
    """
    b = np.asarray(budgets, float)
    d = np.asarray(group_delta, float)
    lo, hi = int(np.argmin(b)), int(np.argmax(b))
    K = d.shape[1]
    cells = np.concatenate([d[:, :, lo], d[:, :, hi]], axis=1)  # (G, 2K)
    test = max_t_sign_flip(cells, np.r_[np.ones(K), -np.ones(K)])
    p = np.nan_to_num(test.adjusted, nan=1.0)
    gain, loss = p[:K], p[K:]
    with np.errstate(invalid="ignore"):
        point = np.nanmean(d, axis=0)
    sig = (gain <= alpha) & (loss <= alpha)
    pts = (point[:, lo] > 0) & (point[:, hi] < 0)
    grades = np.where(sig, SIGNIFICANT, np.where(pts, POINT, NO)).astype(int)
    return EndpointTest(gain, loss, grades, point, test.exact)


def grade_reversal(budgets, delta, lower, upper) -> int:
    """Grade a sign reversal of ``dU`` over increasing budgets (MODEL §6.1-6.3).

    2 if some budget has its interval above 0 and a larger budget has its interval below 0;
    1 if that holds for the point estimates only; 0 otherwise.
    """
    b = np.asarray(budgets, float)
    order = np.argsort(b)
    d, lo, hi = (np.asarray(x, float)[order] for x in (delta, lower, upper))
    if _reverses(lo > 0, hi < 0):
        return SIGNIFICANT
    if _reverses(d > 0, d < 0):
        return POINT
    return NO


def _reverses(pos, neg) -> bool:
    first_pos = np.flatnonzero(pos)
    last_neg = np.flatnonzero(neg)
    return bool(first_pos.size and last_neg.size and first_pos[0] < last_neg[-1])


def reversal_verdict(budgets, data: dict, *, missing=(), inconclusive=None) -> Verdict:
    """Claims 1 and 4: every reader in ``data`` (``{reader: (G, K, m)}`` per-group ``dU`` of its
    distinct operators) graded by the best grade of its operators (``endpoint_test``, whose
    family-wise bound covers every operator), combined over readers."""
    grades = {k: int(endpoint_test(budgets, v).grades.max()) for k, v in data.items()}
    return combine(grades, missing, inconclusive)


#: The paper's table whose effects are the reversal rule's true world at LoCoMo's size (MODEL
#: §11: Table 4 for LoCoMo-sized data, Table 3 for LongMemEval-sized data).
REVERSAL_TABLE = "Table 4"


def reversal_oc(
    key,
    budgets,
    data: dict,
    *,
    operators: dict | None = None,
    table: str = REVERSAL_TABLE,
    n_datasets: int = N_DATASETS,
):
    """Operating characteristics of claims 1 and 4 (``reversal_verdict``) with the readers' own
    spread, at their group count.

    Args:
      key: JAX PRNG key; budgets: ``(m,)``; data: ``{reader: (G, K, m)}`` per-group ``dU`` of
        the distinct operators; operators: ``{reader: [K names]}`` (absent: abstract's curve for
        every operator); table: the paper's table of effects (``paper_checks._effects``);
        n_datasets: data sets per world.

    True world per reader: the paper's ``dU`` curves of ``table`` on the data's grid
    (``_effects.paper_curves``), never the data's observed curves; half-size world: every curve
    halved. Null worlds, one reader at a time (the others true): every operator equal to
    retention, the paper's gains kept with no loss, its losses kept with no gain.
    """
    if not data:
        return None

    def rule(d):
        return reversal_verdict(budgets, d).verdict

    operators = operators or {}
    true = {
        k: paper_curves(budgets, operators.get(k) or ["abstract"] * v.shape[1], table)
        for k, v in data.items()
    }
    nulls = {}
    for k in data:
        nulls[f"{k} equal to ret"] = {**true, k: np.zeros_like(true[k])}
        nulls[f"{k} gain only"] = {**true, k: np.maximum(true[k], 0.0)}
        nulls[f"{k} loss only"] = {**true, k: np.minimum(true[k], 0.0)}
    worlds = (
        f"the paper's {table} gains over retention on the data's grid, its spread",
        f"half the paper's {table} gains",
    )
    return halved_oc(rule, data, true, nulls, key, n_datasets, worlds)


#: The paper's figures of claims 2 and 3 (absolute accuracy points, fraction of questions).
PAPER_TIGHT_GAIN = (0.48, 0.48)
PAPER_LOOSE_MARGIN = (0.08, 0.11)


def tight_gain_test(group_delta, *, alpha: float = ALPHA) -> tuple[int, tuple[int, int], float]:
    """Claim 2 on one source's ``(G, K, m)`` per-group ``dU``: ``(grade, (k, j), p)``.

    The direction by the max-T sign-flip test over the ``K m`` cells ``dU > 0`` (identical
    operators count once); the size by the largest mean gain's 90% t interval (two one-sided
    tests at 5%) (cell ``(k, j)``,
    its adjusted p-value ``p``) against the paper's 48 points (``grade_size``).
    """
    d = np.asarray(group_delta, float)
    G, K, m = d.shape
    test = max_t_sign_flip(d.reshape(G, K * m))
    with np.errstate(invalid="ignore"):
        point = np.nanmean(d, axis=0).reshape(-1)
    i = int(np.nanargmax(point))
    p = float(np.nan_to_num(test.adjusted[i], nan=1.0))
    e = t_estimate(d[:, i // m, i % m], SIZE_LEVEL)
    return grade_size(e, PAPER_TIGHT_GAIN[0], established=p <= alpha), divmod(i, m), p


def tight_gain_verdict(tight: dict, missing=()) -> Verdict:
    """Claim 2 on per-group curves ``{source: (G, K, m)}``: ``tight_gain_test`` per source,
    combined (``combine``)."""
    return combine({src: tight_gain_test(d)[0] for src, d in tight.items()}, missing)


def tight_gain_oc(key, tight: dict, *, n_datasets: int = N_DATASETS):
    """Claim 2's rule in a true world whose largest gain is the paper's 48 points and null worlds
    with none (direction false) or half of it (magnitude false), the curves' shape and spread
    LoCoMo's."""
    mu = {k: np.nanmean(v, axis=0) for k, v in tight.items()}

    def shifted(to):
        return {k: m - np.nanmax(m) + to for k, m in mu.items()}

    return operating_characteristics(
        lambda d: tight_gain_verdict(d).verdict,
        next(iter(tight.values())).shape[0],
        group_values=tight,
        true_means=shifted(PAPER_TIGHT_GAIN[0]),
        null_means={
            "no gain": shifted(0.0),
            "half the paper's gain": shifted(PAPER_TIGHT_GAIN[0] / 2),
        },
        key=key,
        n_datasets=n_datasets,
        true_world="the paper's largest gain (48 points), LoCoMo's curve shape and spread",
        half_means=shifted(PAPER_TIGHT_GAIN[0] / 2),
        half_world="half the paper's largest gain (24 points; also the magnitude null)",
    )


class LooseTest(NamedTuple):
    """Claim 3 on one source's ``(G, K)`` margins; every array ``(K,)``.

    ``above_half``: the one-sided sign-flip p-value of ``margin > 4 points`` per operator (its
    own test: the claim needs every operator, an intersection-union test); ``below_paper``: the
    max-T adjusted p-value of ``margin < 8 points`` over the operators; ``grades``: 2 where
    ``above_half <= alpha``, 0 where ``below_paper <= alpha``, 1 otherwise.
    """

    above_half: np.ndarray
    below_paper: np.ndarray
    grades: np.ndarray


def loose_test(margins, *, alpha: float = ALPHA) -> LooseTest:
    """Claim 3's rule (module docstring) on one source's ``(G, K)`` per-group margins
    ``U(ret) - U(o)`` at the loosest budget (NaN: no value)."""
    m = np.asarray(margins, float)
    half, paper = PAPER_LOOSE_MARGIN[0] / 2, PAPER_LOOSE_MARGIN[0]
    above = np.array(
        [float(max_t_sign_flip(m[:, k] - half).adjusted[0]) for k in range(m.shape[1])]
    )
    above = np.nan_to_num(above, nan=1.0)
    below = max_t_sign_flip(m - paper, -np.ones(m.shape[1])).adjusted
    below = np.nan_to_num(below, nan=1.0)
    grades = np.where(below <= alpha, NO, np.where(above <= alpha, SIGNIFICANT, POINT)).astype(int)
    return LooseTest(above, below, grades)


def loose_verdict(loose: dict, ops: list, missing=()) -> Verdict:
    """Claim 3 on per-group margins ``{source: (G, K)}``: ``loose_test``'s grades per source and
    operator. "Retention beats every operator by 8-11 points" fails when the sign-flip test
    excludes the paper's 8 points for any operator (grade 0); otherwise ``combine`` (PASS when
    every operator's margin is shown above 4 points)."""
    grades = {
        f"{src}:{op}": int(g)
        for src, m in loose.items()
        for op, g in zip(ops, loose_test(m).grades)
    }
    bad = [u for u, g in grades.items() if g == NO]
    if bad:
        note = f"; not measured: {', '.join(missing)}" if missing else ""
        return Verdict(
            FAIL,
            f"the paper's 8-point margin is excluded for {', '.join(bad)} (every operator must "
            f"be beaten by it){note}",
        )
    return combine(grades, missing)


def loose_oc(key, loose: dict, ops: list, *, n_datasets: int = N_DATASETS):
    """Claim 3's rule in a true world where every margin is the paper's 9.5 points, and null
    worlds where one operator ties retention (direction false) or every margin is 4 points
    (magnitude false), with LoCoMo's spread."""
    mid = float(np.mean(PAPER_LOOSE_MARGIN))
    true = {k: np.full(v.shape[1:], mid) for k, v in loose.items()}
    tie = {k: np.where(np.arange(v.shape[1]) == 0, 0.0, mid) for k, v in loose.items()}
    low = {k: np.full(v.shape[1:], PAPER_LOOSE_MARGIN[0] / 2) for k, v in loose.items()}
    return halved_oc(
        lambda d: loose_verdict(d, ops).verdict,
        loose,
        true,
        {"an operator ties retention": tie, "margins of 4 points": low},
        key,
        n_datasets,
        (
            "every margin at the paper's 9.5 points, LoCoMo's spread",
            "every margin at half the paper's 9.5 points",
        ),
    )
