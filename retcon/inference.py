"""Inference with few groups: the one protocol for intervals and tests on grouped data.

The unit of independence is the group (a conversation, a user), never the row (MODEL §8,
metrics). With LoCoMo's ten conversations, asymptotic cluster-robust intervals and percentile
cluster bootstraps under-cover (Cameron & Miller 2015), so every interval on grouped data is
built from one value per group:

* ``group_t_interval``: a Student-t interval on ``G - 1`` degrees of freedom for the mean of
  per-group values (one paired difference per group where the claim is a difference);
* ``sign_flip_test``: the exact randomisation test of "the per-group values are symmetric about
  0", over all ``2**G`` sign patterns (``G <= 16``); its smallest p-value is ``2 / 2**G``;
* ``max_t_sign_flip``: several cells (operators, budgets) behind one decision: the sign-flip
  distribution of the largest directed t statistic over the cells (Westfall & Young 1993), so
  the correction follows the cells' correlation instead of Bonferroni's worst case;
* ``webb_weights``: Webb's (2014) six-point weights for a wild cluster bootstrap, for statistics
  that are not a mean of group values (a crossover budget), which keep working below 11 groups.

docs/statistics.md states the protocol and its references.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from retcon.bootstrap import _group_sums, delta_columns
from retcon.errors import InputError, check_range

#: Largest group count for which ``sign_flip_test`` enumerates every sign pattern.
SIGN_FLIP_MAX_GROUPS = 16

#: Webb's six support points; each has probability 1/6, mean 0 and variance 1.
WEBB_POINTS = np.array(
    [-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)], dtype=np.float64
)


class GroupInterval(NamedTuple):
    """A t interval for the mean of per-group values; every field has shape ``(m,)``.

    ``estimate`` is the mean over groups, ``se`` its standard error ``sd / sqrt(G)``, ``df`` the
    degrees of freedom ``G - 1`` (the number of finite groups in each column, minus one).
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    se: np.ndarray
    df: np.ndarray


def _as_columns(values, name: str) -> tuple[np.ndarray, bool]:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim not in (1, 2):
        raise InputError(f"{name}: values must have shape (G,) or (G, m); got shape {v.shape}.")
    return (v[:, None], True) if v.ndim == 1 else (v, False)


def group_t_interval(values, *, level: float = 0.95) -> GroupInterval:
    """Student-t interval on ``G - 1`` degrees of freedom for the mean of per-group values.

    Args:
      values: ``(G,)`` or ``(G, m)`` per-group statistics (one row per group); NaN marks a group
        without a value in that column and is left out of that column.
      level: two-sided coverage in (0, 1).

    Returns:
      ``GroupInterval`` with ``(m,)`` fields (scalars as ``(1,)`` arrays for ``(G,)`` input).
      A column with fewer than two finite groups has a NaN interval.

    References: Cameron & Miller (2015), J. Human Resources 50(2), section VI.
    """
    check_range("group_t_interval: level", level, 0, 1)
    from scipy.special import stdtrit

    v, _ = _as_columns(values, "group_t_interval")
    finite = np.isfinite(v)
    n = finite.sum(axis=0).astype(np.float64)
    filled = np.where(finite, v, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / n
        resid = np.where(finite, v - mean, 0.0)
        sd = np.sqrt((resid**2).sum(axis=0) / (n - 1.0))
        se = sd / np.sqrt(n)
        df = n - 1.0
        q = np.where(df >= 1, stdtrit(np.maximum(df, 1.0), 0.5 + float(level) / 2.0), np.nan)
    return GroupInterval(mean, mean - q * se, mean + q * se, se, df)


def sign_flip_test(values, *, alternative: str = "two-sided") -> np.ndarray:
    """Exact sign-flip randomisation p-value for the mean of per-group values.

    Under the null, each group's value is symmetric about 0, so every one of the ``2**G`` sign
    patterns is equally likely; the p-value is the share of patterns whose mean is at least as
    extreme as the observed one (the observed pattern counts, so ``p >= 2**-G``, and
    ``p >= 2 / 2**G`` two-sided).

    Args:
      values: ``(G,)`` or ``(G, m)`` per-group values, all finite, ``1 <= G <= 16``.
      alternative: ``"two-sided"``, ``"greater"`` (mean > 0) or ``"less"`` (mean < 0).

    Returns:
      ``(m,)`` p-values.

    References: Fisher (1935), section 21; Young (2019), QJE 134(2) on randomisation inference.
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise InputError(
            "sign_flip_test: alternative must be 'two-sided', 'greater' or 'less'; "
            f"got {alternative!r}."
        )
    v, _ = _as_columns(values, "sign_flip_test")
    G = v.shape[0]
    if not 1 <= G <= SIGN_FLIP_MAX_GROUPS:
        raise InputError(
            f"sign_flip_test: needs 1 to {SIGN_FLIP_MAX_GROUPS} groups; got {G} "
            "(use a t interval or a wild cluster bootstrap beyond that)."
        )
    if not np.isfinite(v).all():
        raise InputError("sign_flip_test: values must be finite (drop groups without a value).")
    signs, _ = sign_patterns(G)  # (2**G, G), row 0 all +1
    means = signs @ v / G  # (2**G, m)
    observed = means[0]
    # A tolerance keeps ties (patterns with the same |mean|) from splitting on rounding.
    tol = 1e-12 * np.maximum(1.0, np.abs(v).max(axis=0))
    if alternative == "greater":
        hits = means >= observed - tol
    elif alternative == "less":
        hits = means <= observed + tol
    else:
        hits = np.abs(means) >= np.abs(observed) - tol
    return hits.mean(axis=0)


class MaxTTest(NamedTuple):
    """Single-step max-T sign-flip test over ``C`` cells; every array has shape ``(C,)``.

    ``statistic``: each cell's directed t statistic (``direction * t``; NaN for a cell with fewer
    than two groups); ``adjusted``: its family-wise adjusted p-value, the share of sign patterns
    whose largest directed t over all cells reaches the cell's observed one (NaN where the
    statistic is NaN); ``n_patterns``: sign patterns used (the observed one included);
    ``exact``: every one of the ``2**G`` patterns was enumerated (``G <= 16``).
    """

    statistic: np.ndarray
    adjusted: np.ndarray
    n_patterns: int
    exact: bool


#: The fixed seed of ``max_t_sign_flip``'s Monte Carlo beyond ``SIGN_FLIP_MAX_GROUPS`` groups
#: (the same data, the same p-values).
MAX_T_SEED = 20260716


def sign_patterns(n_groups: int, *, key: jax.Array | None = None, n_draws: int = 9999):
    """The sign patterns of a sign-flip test: all ``2**G`` (row 0 all +1) for ``G <= 16``, else
    the all-plus row then ``n_draws`` Rademacher rows drawn with ``key`` (default: the fixed
    ``MAX_T_SEED``). Returns ``((P, G) float64, exact)``."""
    G = int(n_groups)
    if G < 1:
        raise InputError(f"sign_patterns: needs at least one group; got {G}.")
    if G <= SIGN_FLIP_MAX_GROUPS:
        patterns = np.arange(2**G, dtype=np.int64)
        return 1.0 - 2.0 * ((patterns[:, None] >> np.arange(G)) & 1), True
    if int(n_draws) < 1:
        raise InputError(f"sign_patterns: n_draws must be >= 1; got {n_draws}.")
    key = jax.random.key(MAX_T_SEED) if key is None else key
    draws = np.asarray(jax.random.rademacher(key, (int(n_draws), G)), np.float64)
    return np.concatenate([np.ones((1, G)), draws]), False


def _flipped_t(signs: np.ndarray, v: np.ndarray, finite: np.ndarray) -> np.ndarray:
    """``(P, C)`` one-sample t statistics of each cell's sign-flipped finite values.

    With ``S`` the flipped sum and ``Q`` the sum of squares of a cell's ``n`` values (the same
    under every pattern), ``t = S sqrt(n - 1) / sqrt(n Q - S**2)``: within a cell an increasing
    function of the flipped mean (the ordering of ``sign_flip_test``). Zero spread gives
    ``+-inf`` by the sum's sign, and 0 where the sum is 0 too."""
    n = finite.sum(axis=0).astype(np.float64)  # (C,)
    x = np.where(finite, v, 0.0)
    q = (x**2).sum(axis=0)
    total = signs @ x  # (P, C)
    den2 = n * q - total * total
    # rounding guard: a spread below 1e-9 of the values' size is none
    tiny = den2 <= (1e-9 * n) ** 2 * np.maximum(q, 1e-300)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = total * np.sqrt(np.maximum(n - 1.0, 0.0)) / np.sqrt(np.where(tiny, 1.0, den2))
        flat = np.where(
            np.abs(total) <= 1e-12 * np.sqrt(np.maximum(n * q, 1e-300)),
            0.0,
            np.sign(total) * np.inf,
        )
    t = np.where(tiny, flat, t)
    return np.where(n >= 2, t, np.nan)


def max_t_sign_flip(
    values, directions=None, *, key: jax.Array | None = None, n_draws: int = 9999
) -> MaxTTest:
    """Family-wise exact sign-flip test of several cells' means, one-sided per cell (max-T).

    ``values[:, c]`` holds one value per group for cell ``c`` (a gain at one operator and
    budget); the hypothesis of cell ``c`` is ``direction_c * mean_c > 0``. Under the complete
    null each group's vector of values is symmetric about 0, independently of the other groups,
    so each of the sign patterns ``e`` (one sign per group, shared by all of the group's cells)
    is equally likely. With ``T_c(e)`` the one-sample t of cell ``c`` on the flipped values and
    ``M(e) = max_c direction_c * T_c(e)``, the adjusted p-value of cell ``c`` is the share of
    patterns with ``M(e) >= direction_c * T_c(1)``. Rejecting the cells with adjusted p <= alpha
    keeps the family-wise error <= alpha in the strong sense: pattern by pattern, the maximum over
    all cells is at least the maximum over the true-null cells, whose sign-flip distribution is
    exact. Because one pattern flips every cell of a group together, the correction follows the
    cells' correlation: identical cells count once, and with one cell this is
    ``sign_flip_test(..., alternative="greater")``. Groups without a value in a cell (NaN) are
    left out of that cell.

    Args:
      values: ``(G,)`` or ``(G, C)`` per-group values (NaN: no value).
      directions: ``(C,)`` of +1 (test mean > 0) or -1 (mean < 0); default all +1.
      key, n_draws: the Monte Carlo beyond ``SIGN_FLIP_MAX_GROUPS`` groups (``sign_patterns``;
        default key: the fixed ``MAX_T_SEED``); p-values then ``(1 + hits) / (1 + n_draws)``.

    Returns:
      ``MaxTTest``; at ``G = 10`` no adjusted p-value is below ``1 / 1024``.

    References: Westfall & Young (1993), Resampling-Based Multiple Testing, ch. 2 (single-step
    max-T); Fisher (1935), section 21; Young (2019), QJE 134(2) on randomisation inference.
    """
    v, _ = _as_columns(values, "max_t_sign_flip")
    G, C = v.shape
    d = np.ones(C) if directions is None else np.asarray(directions, dtype=np.float64).reshape(-1)
    if d.shape != (C,) or not np.isin(d, (-1.0, 1.0)).all():
        raise InputError(
            f"max_t_sign_flip: directions must be {C} values of +1 or -1; got {d.tolist()}."
        )
    signs, exact = sign_patterns(G, key=key, n_draws=n_draws)
    finite = np.isfinite(v)
    t = _flipped_t(signs, v, finite) * d  # (P, C) directed
    observed = t[0]
    with np.errstate(invalid="ignore"):
        m = np.max(np.where(np.isnan(t), -np.inf, t), axis=1)  # (P,)
    ok = ~np.isnan(observed)
    tol = 1e-10 * np.maximum(1.0, np.where(np.isfinite(observed), np.abs(observed), 1.0))
    hits = m[:, None] >= observed[None, :] - tol[None, :]  # (P, C)
    adjusted = np.where(ok, hits.mean(axis=0), np.nan)
    return MaxTTest(observed, adjusted, int(signs.shape[0]), bool(exact))


def sign_flip_quadratic_test(scores, *, key: jax.Array | None = None, n_draws: int = 9999):
    """Sign-flip randomisation test that per-group score vectors have mean 0 (a Hotelling-type
    statistic, one or several dimensions).

    With ``U_g`` the ``k``-vector of group ``g`` and ``V = sum_g U_g U_g'`` (unchanged by sign
    flips), the statistic of a sign pattern ``e`` is ``T(e) = S(e)' V^+ S(e)`` with
    ``S(e) = sum_g e_g U_g``. Under the null each ``U_g`` is symmetric about 0 and independent of
    the others, so every pattern is equally likely; the p-value is the share of patterns with
    ``T(e) >= T(1)``. For ``k = 1`` this is ``sign_flip_test`` on ``|mean|``. Exact over all
    ``2**G`` patterns for ``G <= 16``; beyond that ``n_draws`` random patterns drawn with ``key``
    (p-value ``(1 + hits) / (1 + n_draws)``).

    Args:
      scores: ``(G,)`` or ``(G, k)`` per-group values, finite, ``G >= 2``.
      key: JAX key, needed only when ``G > 16``.
      n_draws: random patterns when ``G > 16``.

    Returns:
      ``(statistic, p_value)``: ``T(1)`` and its randomisation p-value (floats).

    References: Fisher (1935), section 21; Canay, Romano & Shaikh (2017), Econometrica 85(3),
    on randomisation tests with few clusters.
    """
    u = np.asarray(scores, dtype=np.float64)
    u = u[:, None] if u.ndim == 1 else u
    if u.ndim != 2 or u.shape[0] < 2:
        raise InputError(
            f"sign_flip_quadratic_test: scores must have shape (G, k) with G >= 2; got {u.shape}."
        )
    if not np.isfinite(u).all():
        raise InputError("sign_flip_quadratic_test: scores must be finite.")
    G = u.shape[0]
    v_inv = np.linalg.pinv(u.T @ u, rcond=1e-10, hermitian=True)
    if G > SIGN_FLIP_MAX_GROUPS and key is None:
        raise InputError(
            f"sign_flip_quadratic_test: {G} groups need random sign patterns; pass key."
        )
    signs, _ = sign_patterns(G, key=key, n_draws=n_draws)
    s = signs @ u  # (P, k)
    t = np.einsum("pk,kl,pl->p", s, v_inv, s)
    tol = 1e-10 * max(1.0, abs(t[0]))
    return float(t[0]), float(np.mean(t >= t[0] - tol))


def webb_weights(key: jax.Array, n_groups: int, n_resamples: int) -> np.ndarray:
    """Webb's six-point wild cluster bootstrap weights, one per group and resample.

    Each weight is drawn uniformly from ``WEBB_POINTS`` (mean 0, variance 1, fourth moment 7/6).
    With ``G`` groups the six points give ``6**G`` distinct patterns against Rademacher's ``2**G``,
    which is what keeps the wild cluster bootstrap usable below 11 groups.

    Args:
      key: JAX PRNG key; the same key gives the same weights.
      n_groups: ``G >= 1``.
      n_resamples: ``R >= 1``.

    Returns:
      ``(R, G)`` float64 weights.

    References: Webb (2014), "Reworking wild bootstrap based inference for clustered errors",
    Queen's Economics Department WP 1315.
    """
    G, R = int(n_groups), int(n_resamples)
    if G < 1 or R < 1:
        raise InputError(f"webb_weights: n_groups and n_resamples must be >= 1; got {G} and {R}.")
    idx = np.asarray(jax.random.randint(key, (R, G), 0, WEBB_POINTS.size))
    return WEBB_POINTS[idx]


def group_t_pvalue(values, *, alternative: str = "greater") -> np.ndarray:
    """One- or two-sided Student-t p-value on ``G - 1`` df for the mean of per-group values.

    The test that matches ``group_t_interval``: with ``alternative="greater"`` it rejects
    "mean <= 0" at level ``a`` exactly when the one-sided ``1 - a`` interval lies above 0.

    Args:
      values: ``(G,)`` or ``(G, m)`` per-group values; NaN leaves a group out of its column.
      alternative: ``"greater"`` (mean > 0), ``"less"`` (mean < 0) or ``"two-sided"``.

    Returns:
      ``(m,)`` p-values; NaN for a column with fewer than two finite groups; a column with zero
      spread gets 0 or 1 by the sign of its mean (0.5 at exactly 0, one-sided).

    References: Cameron & Miller (2015), J. Human Resources 50(2), section VI.
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise InputError(
            "group_t_pvalue: alternative must be 'two-sided', 'greater' or 'less'; "
            f"got {alternative!r}."
        )
    from scipy.special import stdtr

    ci = group_t_interval(values)
    v = np.asarray(values, dtype=np.float64)
    # spread or mean below rounding (a budget where every group's difference is the same) is 0
    tol = 1e-12 * np.maximum(1.0, np.nanmax(np.abs(v), axis=0) if v.size else 1.0)
    se = np.where(ci.se > tol, ci.se, 0.0)
    est = np.where(np.abs(ci.estimate) > tol, ci.estimate, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, est / np.where(se > 0, se, 1.0), np.sign(est) * np.inf)
        df = np.maximum(ci.df, 1.0)
        upper = np.where(np.isnan(t) | ((se == 0) & (est == 0)), 0.5, stdtr(df, -t))
    if alternative == "greater":
        p = upper
    elif alternative == "less":
        p = 1.0 - upper
    else:
        p = np.minimum(1.0, 2.0 * np.minimum(upper, 1.0 - upper))
    return np.where(ci.df >= 1, p, np.nan)


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values: reject where ``adjusted <= alpha`` for family-wise
    error ``alpha`` over the whole family, under any dependence between the tests.

    Args:
      pvalues: any shape; NaN entries are not tests (they stay NaN and do not count in the family).

    Returns:
      adjusted p-values, same shape, each in ``[p, 1]``.

    References: Holm (1979), Scand. J. Statistics 6(2), 65-70.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    flat = p.ravel()
    ok = np.flatnonzero(np.isfinite(flat))
    out = np.full(flat.shape, np.nan)
    if ok.size:
        order = ok[np.argsort(flat[ok], kind="stable")]
        k = ok.size
        adj = np.maximum.accumulate((k - np.arange(k)) * flat[order])
        out[order] = np.minimum(adj, 1.0)
    return out.reshape(p.shape)


def wild_cluster_replicates(
    key: jax.Array, group_values, *, n_resamples: int, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wild cluster bootstrap of a mean over groups, for statistics read off it (a crossover).

    Each resample keeps every group and perturbs its deviation from the mean with one Webb weight
    per group, shared by every column (a group's whole ``dU(B)`` curve moves together):
    ``mean + c * mean_g(w_g * (v_g - mean))``. The scale ``c = sqrt(G / (G - 1)) * t_{G-1} / z``
    (quantiles at ``0.5 + level / 2``) makes the percentile interval of a column reproduce the
    Student-t interval of ``group_t_interval`` for the mean itself; a statistic that is a smooth
    function of the columns (the root of a curve) inherits that calibration through the delta
    method. The coverage of crossover intervals built this way is measured in the slow tests.

    Args:
      key: JAX PRNG key of the weights (``webb_weights``).
      group_values: ``(G, ...)`` per-group values (NaN: a group without data in that column,
        left out of that column's mean and perturbation).
      n_resamples: ``R >= 1``.
      level: the coverage the scale is calibrated for, in (0, 1).

    Returns:
      ``(point (...), replicates (R, ...))``: the mean over groups and its resamples (NaN where a
      column has no finite group).

    References: Cameron, Gelbach & Miller (2008), REStat 90(3); Webb (2014); Cameron & Miller
    (2015), section VI.C.
    """
    check_range("wild_cluster_replicates: level", level, 0, 1)
    from scipy.special import ndtri, stdtrit

    v = np.asarray(group_values, dtype=np.float64)
    if v.ndim < 1 or v.shape[0] < 2:
        raise InputError(
            f"wild_cluster_replicates: group_values must have shape (G >= 2, ...); got {v.shape}."
        )
    G = v.shape[0]
    flat = v.reshape(G, -1)
    finite = np.isfinite(flat)
    n = finite.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.where(finite, flat, 0.0).sum(0) / np.maximum(n, 1), np.nan)
        resid = np.where(finite, flat - mean, 0.0)
        q = 0.5 + float(level) / 2.0
        scale = np.where(
            n >= 2,
            np.sqrt(n / np.maximum(n - 1.0, 1.0)) * stdtrit(np.maximum(n - 1.0, 1.0), q) / ndtri(q),
            0.0,
        )
    w = webb_weights(key, G, int(n_resamples))  # (R, G)
    reps = mean + scale * (w @ resid) / np.maximum(n, 1)
    reps = np.where(n > 0, reps, np.nan)
    return mean.reshape(v.shape[1:]), reps.reshape((-1,) + v.shape[1:])


def group_means(values, groups, mask=None) -> np.ndarray:
    """Per-group means of each column over its masked rows: the one value per group of step 1.

    Args:
      values: ``(n,)`` or ``(n, m)``; groups: ``(n,)`` labels (any type numpy can sort);
      mask: like ``values``, which rows count for each column (default all).

    Returns:
      ``(G, m)`` (``(G,)`` for 1-D ``values``), groups in ``np.unique`` order of their labels;
      NaN where a group has no masked row.
    """
    v = np.asarray(values, dtype=np.float64)
    squeeze = v.ndim == 1
    sums, counts = _group_sums(v, groups, mask, "group_means")
    out = np.where(counts > 0, sums / np.maximum(counts, 1e-300), np.nan)
    return out[:, 0] if squeeze else out


def group_delta_curves(outcomes, groups, budget, budgets) -> np.ndarray:
    """Per-group ``dU_o(B)``: the mean of ``y_o - y_ret`` over each group's rows at each budget.

    Args:
      outcomes: ``(n, A)`` outcomes, ``ret`` first (``ACTIONS`` order); groups, budget: ``(n,)``;
        budgets: ``(m,)`` the grid.

    Returns:
      ``(G, A - 1, m)``; NaN where a group has no row at a budget.

    References: MODEL §3 (``dU``).
    """
    values, mask, shape = delta_columns(outcomes, budget, budgets, "group_delta_curves")
    return group_means(values, groups, mask).reshape((-1, *shape))


def wild_delta_curve_replicates(
    key: jax.Array, outcomes, groups, budget, budgets, *, n_resamples: int, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """``dU_o(B)`` as the mean of per-group curves, with wild-cluster-bootstrap resampled curves.

    The few-groups replacement of ``retcon.bootstrap.delta_curve_replicates`` (same arguments and
    shapes): pass the result to ``theory.crossover_interval`` for a crossover's interval.

    Returns:
      ``(point (A - 1, m), replicates (R, A - 1, m))``.
    """
    curves = group_delta_curves(outcomes, groups, budget, budgets)
    return wild_cluster_replicates(key, curves, n_resamples=n_resamples, level=level)


def group_mean_interval(values, groups, mask=None, *, level: float = 0.95) -> GroupInterval:
    """Step 1 then step 2: per-group means of each column (``group_means``), then the Student-t
    interval of their mean on ``G - 1`` df (``group_t_interval``). ``(m,)`` fields."""
    return group_t_interval(group_means(values, groups, mask), level=level)
