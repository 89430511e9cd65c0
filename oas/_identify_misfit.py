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

from oas._identify import N_TYPES, ReaderRows
from oas._misfit import MISFIT_ALPHA, _nuisance, _project, _row_scores, format_misfit, misfit_tests
from retcon.inference import sign_flip_quadratic_test


def _context_x(structure, budget) -> np.ndarray:
    """``(n,)`` centred log of retention's packed context tokens ``min(B, sum of its records)``."""
    total = np.asarray(structure.lengths, np.float64)[:, 0].sum(-1)
    ctx = np.maximum(np.minimum(np.asarray(budget, np.float64), total), 1.0)
    x = np.log(ctx)
    return x - x.mean()


def _reader_direction(theta, rows: ReaderRows) -> np.ndarray:
    """``(n,)`` d p_ret / d gamma at ``gamma = 0`` of ``g + (a_t - g) exp(gamma x) s_ret``:
    ``(a_t - g) s_ret x`` (before the clip to [0, 1])."""
    th = np.asarray(theta, np.float64)
    g = 1.0 / (1.0 + np.exp(-th[0]))
    a = g + (1.0 - g) / (1.0 + np.exp(-th[1 : 1 + N_TYPES]))
    s_ret = np.asarray(rows.support, np.float64)[:, 0]
    s = np.asarray(rows.slot, np.int64)
    return (a[s] - g) * s_ret * _context_x(rows.structure, rows.budget)


def reader_context_test(key: jax.Array, rows: ReaderRows, theta) -> dict:
    """The retention-rows score test of a reader drifting with context size (module doc).

    Returns:
      ``{"statistic", "p_value", "estimate": {"a_factor_per_doubling"}, "n_groups"}``; NaN
      p-value where no retention row informs ``a_t`` (no support anywhere).
    """
    jac, resid, weight, _ = _row_scores(theta, rows)
    G = np.unique(np.asarray(rows.groups).astype(str)).size
    live = jac[:, 0].any(-1)
    d = np.where(live, _reader_direction(theta, rows), 0.0)
    if not np.any(d):
        return {"statistic": float("nan"), "p_value": float("nan"), "estimate": {}, "n_groups": G}
    nuis = _nuisance(jac, resid, weight, rows.groups)
    w = weight[:, 0]
    u_lam = nuis.to_group @ (resid[:, 0] * d)[:, None]  # (G, 1)
    u_proj, info = _project(nuis, u_lam, (d * w)[None, :] @ jac[:, 0], (d * w) @ d)
    info = float(info[0, 0])
    stat, p = sign_flip_quadratic_test(u_proj, key=key)
    step = float(u_proj.sum()) / info if info > 0 else float("nan")
    return {
        "statistic": float(stat),
        "p_value": float(p),
        "estimate": {"a_factor_per_doubling": float(np.exp(step * np.log(2.0)))},
        "n_groups": int(G),
    }


def misfit_attribution(
    key: jax.Array, rows: ReaderRows, theta, strata, *, stratum_names=None, alpha=MISFIT_ALPHA
) -> dict:
    """``misfit_tests`` with ``reader_test`` and ``looks_like`` (module doc).

    Args:
      key: JAX key; rows, theta, strata, stratum_names, alpha: as ``misfit_tests``.
    """
    m = misfit_tests(key, rows, theta, strata, stratum_names=stratum_names, alpha=alpha)
    r = reader_context_test(jax.random.fold_in(key, 7_777), rows, theta)
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
