"""Inference with few groups: the one protocol for intervals and tests on grouped data.

The unit of independence is the group (a conversation, a user), never the row (MODEL §8,
metrics). With LoCoMo's ten conversations, asymptotic cluster-robust intervals and percentile
cluster bootstraps under-cover (Cameron & Miller 2015), so every interval on grouped data is
built from one value per group:

* ``group_t_interval``: a Student-t interval on ``G - 1`` degrees of freedom for the mean of
  per-group values (one paired difference per group where the claim is a difference);
* ``sign_flip_test``: the exact randomisation test of "the per-group values are symmetric about
  0", over all ``2**G`` sign patterns (``G <= 16``); its smallest p-value is ``2 / 2**G``;
* ``webb_weights``: Webb's (2014) six-point weights for a wild cluster bootstrap, for statistics
  that are not a mean of group values (a crossover budget), which keep working below 11 groups.

docs/statistics.md states the protocol and its references.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from retcon.errors import InputError

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
    if not 0.0 < float(level) < 1.0:
        raise InputError(f"group_t_interval: level must be in (0, 1); got {level}.")
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
    patterns = np.arange(2**G, dtype=np.int64)
    signs = 1.0 - 2.0 * ((patterns[:, None] >> np.arange(G)) & 1)  # (2**G, G), row 0 all +1
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
    if G <= SIGN_FLIP_MAX_GROUPS:
        patterns = np.arange(2**G, dtype=np.int64)
        signs = 1.0 - 2.0 * ((patterns[:, None] >> np.arange(G)) & 1)
    else:
        if key is None:
            raise InputError(
                f"sign_flip_quadratic_test: {G} groups need random sign patterns; pass key."
            )
        draws = np.asarray(jax.random.rademacher(key, (int(n_draws), G)), np.float64)
        signs = np.concatenate([np.ones((1, G)), draws])
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
