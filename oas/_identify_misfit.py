"""Whose misfit is it? The reader's (degrades with context size) or the operators' (fidelity).

``oas._misfit.misfit_tests`` tests each operator's fidelity for a drift with the budget and a
difference by evidence length. A reader whose accuracy falls as its context grows moves every
action's success, retention's included, and the operators' fidelity tests pick that up too: the
report then blames the operators for the reader. Retention's rows separate the two: no operator's
fidelity enters them (MODEL §2: ``p_ret = g + (a_t - g) s_ret``), so a misfit in retention's rows
is the reader's.

``reader_context_test``: the score test of ``a_t`` drifting with the context size, on retention's
rows alone, ``p_ret = g + (a_t - g) exp(gamma x) s_ret`` with ``x`` the log of retention's packed
context tokens (``min(B, its records' tokens)``, centred), ``H0: gamma = 0``; scores projected off
the nuisance scores (every parameter of the pooled fit), summed per group and sign-flip tested,
as ``misfit_tests`` does.

``misfit_attribution``: ``misfit_tests`` plus ``looks_like``: ``"reader"`` when the misfit is
flagged and the retention test rejects at ``alpha``; ``"operators"`` when the misfit is flagged and
it does not; ``"none"`` without a misfit. Rates in docs/identify.md ("Whose misfit").

References: MODEL §2; Rao (1948); Neyman (1959); docs/identify.md.
"""

from __future__ import annotations

import jax
import numpy as np

from oas._identify import N_TYPES, support_fractions
from oas._misfit import MISFIT_ALPHA, _row_scores, format_misfit, misfit_tests
from retcon.inference import sign_flip_quadratic_test


def _context_x(structure, budget) -> np.ndarray:
    """``(n,)`` centred log of retention's packed context tokens ``min(B, sum of its records)``."""
    total = np.asarray(structure.lengths, np.float64)[:, 0].sum(-1)
    ctx = np.maximum(np.minimum(np.asarray(budget, np.float64), total), 1.0)
    x = np.log(ctx)
    return x - x.mean()


def _reader_direction(theta, structure, budget, slot) -> np.ndarray:
    """``(n,)`` d p_ret / d gamma at ``gamma = 0`` of ``g + (a_t - g) exp(gamma x) s_ret``:
    ``(a_t - g) s_ret x`` (before the clip to [0, 1])."""
    th = np.asarray(theta, np.float64)
    g = 1.0 / (1.0 + np.exp(-th[0]))
    a = g + (1.0 - g) / (1.0 + np.exp(-th[1 : 1 + N_TYPES]))
    s_ret = np.asarray(support_fractions(structure, budget), np.float64)[:, 0]
    s = np.asarray(slot, np.int64)
    return (a[s] - g) * s_ret * _context_x(structure, budget)


def reader_context_test(key: jax.Array, structure, budget, slot, outcomes, groups, theta) -> dict:
    """The retention-rows score test of a reader drifting with context size (module doc).

    Returns:
      ``{"statistic", "p_value", "estimate": {"a_factor_per_doubling"}, "n_groups"}``; NaN
      p-value where no retention row informs ``a_t`` (no support anywhere).
    """
    from scipy import sparse

    budget = np.asarray(budget, np.float64)
    jac, resid, weight, _ = _row_scores(theta, structure, budget, slot, outcomes)
    n, A, P = jac.shape
    labels, gid = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    G = labels.size
    live = jac[:, 0].any(-1)
    d = np.where(live, _reader_direction(theta, structure, budget, slot), 0.0)
    if not np.any(d):
        return {"statistic": float("nan"), "p_value": float("nan"), "estimate": {}, "n_groups": G}
    to_group = sparse.csr_matrix((np.ones(n), (gid.ravel(), np.arange(n))), shape=(G, n))
    u_theta = to_group @ (resid[:, :, None] * jac).sum(1)  # (G, P)
    flat = jac.reshape(n * A, P)
    i_tt_pinv = np.linalg.pinv((flat * weight.reshape(-1, 1)).T @ flat, rcond=1e-9, hermitian=True)
    w = weight[:, 0]
    u_lam = to_group @ (resid[:, 0] * d)[:, None]  # (G, 1)
    i_lt = (d * w)[None, :] @ jac[:, 0]  # (1, P)
    i_ll = (d * w) @ d
    coef = i_lt @ i_tt_pinv
    u_proj = u_lam - u_theta @ coef.T
    info = float(i_ll - (coef @ i_lt.T)[0, 0])
    stat, p = sign_flip_quadratic_test(u_proj, key=key)
    step = float(u_proj.sum()) / info if info > 0 else float("nan")
    return {
        "statistic": float(stat),
        "p_value": float(p),
        "estimate": {"a_factor_per_doubling": float(np.exp(step * np.log(2.0)))},
        "n_groups": int(G),
    }


def misfit_attribution(key: jax.Array, *rows, stratum_names=None, alpha=MISFIT_ALPHA) -> dict:
    """``misfit_tests`` with ``reader_test`` and ``looks_like`` (module doc).

    Args:
      key: JAX key; rows: ``misfit_tests``'s ``structure, budget, slot, outcomes, groups,
        theta, strata``; stratum_names, alpha: as ``misfit_tests``.
    """
    m = misfit_tests(key, *rows, stratum_names=stratum_names, alpha=alpha)
    r = reader_context_test(jax.random.fold_in(key, 7_777), *rows[:6])
    reader = bool(np.isfinite(r["p_value"]) and r["p_value"] <= alpha)
    looks = "none" if not m["misfit"] else "reader" if reader else "operators"
    return {**m, "reader_test": r, "looks_like": looks}


def format_misfit_attribution(m: dict) -> str:
    """``format_misfit``'s lines and one saying whose misfit it looks like."""
    out = format_misfit(m)
    if "looks_like" not in m:
        return out
    r = m["reader_test"]
    p = r["p_value"]
    why = {
        "reader": "retention's rows misfit too (no operator's fidelity enters them): the reader's "
        "accuracy changes with its context size",
        "operators": "retention's rows fit: the operators' fidelity",
        "none": "no misfit",
    }[m["looks_like"]]
    return f"{out}\n  looks like: {m['looks_like']} ({why}; retention test p = {p:.3g})"


__all__ = ["format_misfit_attribution", "misfit_attribution", "reader_context_test"]
