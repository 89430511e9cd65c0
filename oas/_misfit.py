"""Does the identified reader fit? Score tests of a budget-dependent and a per-stratum fidelity.

The reader of MODEL §2 has one fidelity ``phi_{o,t}`` per operator and type, the same at every
budget and for every evidence length. Two extensions nest it:

* budget drift: ``phi_{o,t} exp(gamma_o x)`` with ``x = log B - mean log B`` (one parameter per
  operator; ``gamma_o < 0``: the fidelity falls as the budget grows);
* per-stratum fidelity: ``phi_{o,t} exp(delta_{o,s})`` for strata ``s = 1..S-1`` of raw
  evidence length (stratum 0 the reference).

Each is tested against the pooled fit by a score test that needs no refit: at the fitted
``theta`` every row contributes the score ``(y - p) / (p (1 - p)) dp/dpsi`` of each action; the
scores of the tested parameters are projected off the nuisance scores (``U_lam - I_lam,theta
I_theta,theta^+ U_theta``, Neyman's orthogonalised score, so that estimating ``theta`` does not
shift it), summed per group (conversation), and the ``G`` group vectors go through the sign-flip
randomisation test (``retcon.inference.sign_flip_quadratic_test``, exact over the ``2**G``
patterns for ``G <= 16``): rows of one group may be correlated in any way, groups are independent.
Six tests (two per operator) are combined by Holm's step-down; ``misfit`` is any Holm-adjusted
p-value at or below ``alpha``. Size and power are measured in docs/identify.md.

References: MODEL §2 (reader), §8 (groups); Rao (1948) score test; Neyman (1959) C(alpha)
tests; Holm (1979); docs/statistics.md (the few-groups protocol).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import numpy as np

from oas._identify import N_OPS, N_TYPES, P_EPS, ReaderRows
from retcon.inference import holm, sign_flip_quadratic_test
from retcon.vocab import OPERATORS

#: Default family-wise level of the misfit verdict.
MISFIT_ALPHA = 0.05


def _row_scores(theta, rows: ReaderRows):
    """Per-row derivatives of every action's ``p`` in ``theta`` (closed form), ``dl/dp``, the
    Fisher weights ``1 / (p (1 - p))`` and each operator's support term ``(a_t - g) phi s_o``.

    With ``g = sigmoid(u_g)``, ``a_t = g + (1 - g) sigmoid(u_t)``, ``phi = exp(v)`` and
    ``p = g + (a_t - g) c`` (``c = s_ret`` or ``phi s_o``): ``dp/du_g = g (1 - g)(1 - sig_t c)``,
    ``dp/du_t = (1 - g) sig_t (1 - sig_t) c``, ``dp/dv_{o,t} = (a_t - g) phi s_o``; zero where the
    clip to [0, 1] binds.
    """
    frac = np.asarray(rows.support, np.float64)
    th = np.asarray(theta, np.float64)
    s = np.asarray(rows.slot, np.int64)
    n = s.size
    g = 1.0 / (1.0 + np.exp(-th[0]))
    sig = 1.0 / (1.0 + np.exp(-th[1 : 1 + N_TYPES]))
    a = g + (1.0 - g) * sig
    phi = np.exp(th[1 + N_TYPES :]).reshape(N_OPS, N_TYPES)
    c = np.concatenate([frac[:, :1], phi[:, s].T * frac[:, 1:]], axis=1)  # (n, 4)
    q = g + (a[s] - g)[:, None] * c
    live = (q > 0) & (q < 1)
    jac = np.zeros((n, 4, 1 + N_TYPES + N_OPS * N_TYPES))
    jac[:, :, 0] = g * (1 - g) * (1 - sig[s][:, None] * c)
    jac[np.arange(n), :, 1 + s] = ((1 - g) * sig[s] * (1 - sig[s]))[:, None] * c
    lift = (a[s] - g)[:, None] * c[:, 1:]  # (n, 3)
    for j in range(N_OPS):
        jac[np.arange(n), 1 + j, 1 + N_TYPES + j * N_TYPES + s] = lift[:, j]
    jac = np.where(live[..., None], jac, 0.0)
    p = np.clip(q, P_EPS, 1 - P_EPS)
    y = np.asarray(rows.outcomes, np.float64)
    resid = (y - p) / (p * (1 - p))  # dl/dp
    weight = 1.0 / (p * (1 - p))
    return jac, resid, weight, np.where(live[:, 1:], lift, 0.0)


class _Nuisance(NamedTuple):
    """The pooled fit's side of a score test: the sum over each group's rows, the nuisance
    scores ``U_theta`` per group ``(G, P)`` and the pseudo-inverse of their information."""

    to_group: Any  # scipy.sparse (G, n)
    u_theta: np.ndarray
    i_tt_pinv: np.ndarray


def _nuisance(jac, resid, weight, groups) -> _Nuisance:
    """``_Nuisance`` of the rows' ``_row_scores`` and ``groups``."""
    from scipy import sparse

    n, A, P = jac.shape
    _, gid = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    G = int(gid.max()) + 1
    to_group = sparse.csr_matrix((np.ones(n), (gid.ravel(), np.arange(n))), shape=(G, n))
    u_theta = to_group @ (resid[:, :, None] * jac).sum(1)  # (G, P)
    flat = jac.reshape(n * A, P)
    i_tt = (flat * weight.reshape(-1, 1)).T @ flat
    return _Nuisance(to_group, u_theta, np.linalg.pinv(i_tt, rcond=1e-9, hermitian=True))


def _project(nuis: _Nuisance, u_lam, i_lt, i_ll):
    """Neyman's orthogonalised scores ``(G, k)`` and their information ``(k, k)``: the tested
    scores ``u_lam`` less their projection on the nuisance scores (module docstring)."""
    coef = i_lt @ nuis.i_tt_pinv  # (k, P)
    return u_lam - nuis.u_theta @ coef.T, i_ll - coef @ i_lt.T


def misfit_tests(
    key: jax.Array,
    rows: ReaderRows,
    theta,
    strata,
    *,
    stratum_names=None,
    alpha: float = MISFIT_ALPHA,
) -> dict:
    """Score tests of a budget-dependent and a per-stratum fidelity against the pooled fit.

    Args:
      key: JAX key (random sign patterns, only with more than 16 groups).
      rows: the ``ReaderRows`` the reader was fitted on (their support is read, not recomputed).
      theta: ``(P,)`` the pooled maximum-likelihood reader (``oas.identify(...).theta``).
      strata: ``(n,)`` int stratum of each row (``0..S-1``); one stratum skips that test.
      stratum_names: optional ``S`` labels for the report.
      alpha: family-wise level of the verdict (Holm over every test).

    Returns:
      a JSON-ready dict: ``misfit`` (bool), ``p_value`` (smallest Holm-adjusted p), ``alpha``,
      ``method``, ``n_groups``, ``tests`` (one per operator and kind: ``operator``, ``test``
      ``"budget"`` or ``"stratum"``, ``stratum`` named, ``statistic``, ``df``, ``p_value``,
      ``p_holm``, ``estimate``), ``operators`` (per operator: ``misfit``, ``p_value``, the test
      and stratum that decide).

    References: MODEL §2, §8; module docstring.
    """
    budget = np.asarray(rows.budget, np.float64)
    strata = np.asarray(strata, np.int64)
    n_strata = int(strata.max()) + 1 if strata.size else 1
    names = list(stratum_names) if stratum_names is not None else [str(s) for s in range(n_strata)]
    jac, resid, weight, lift = _row_scores(theta, rows)
    nuis = _nuisance(jac, resid, weight, rows.groups)
    G = nuis.u_theta.shape[0]
    x = np.log(budget) - np.log(budget).mean()
    tests = []
    for j, o in enumerate(OPERATORS):
        a_col = 1 + j
        kinds = [("budget", x[:, None])]
        if n_strata > 1:
            onehot = (strata[:, None] == np.arange(n_strata)[None]).astype(np.float64)
            kinds.append(("stratum", onehot))
        for kind, basis in kinds:
            d = lift[:, j][:, None] * basis  # (n, k) dp/dlambda
            if not np.any(d):
                continue
            u_lam = nuis.to_group @ (resid[:, a_col][:, None] * d)  # (G, k)
            wd = d * weight[:, a_col][:, None]
            u_proj, info = _project(nuis, u_lam, wd.T @ jac[:, a_col], wd.T @ d)  # (G, k), (k, k)
            if kind == "stratum":
                # stratum 0 is the reference (the pooled phi absorbs the common level)
                z = u_proj.sum(0) / np.sqrt(np.maximum((u_proj**2).sum(0), 1e-300))
                worst = int(np.argmax(np.abs(z)))
                u_test, info_test = u_proj[:, 1:], info[1:, 1:]
                step = np.linalg.pinv(info_test, rcond=1e-9, hermitian=True) @ u_test.sum(0)
                estimate = {names[s + 1]: float(np.exp(step[s])) for s in range(step.size)}
                stratum = names[worst]
            else:
                worst = 0
                u_test, info_test = u_proj, info
                step = np.linalg.pinv(info_test, rcond=1e-9, hermitian=True) @ u_test.sum(0)
                estimate = {"phi_factor_per_doubling": float(np.exp(step[0] * math.log(2.0)))}
                stratum = "all"
            stat, p = sign_flip_quadratic_test(u_test, key=jax.random.fold_in(key, len(tests)))
            tests.append(
                {
                    "operator": o,
                    "test": kind,
                    "stratum": stratum,
                    "statistic": stat,
                    "df": int(u_test.shape[1]),
                    "p_value": p,
                    "estimate": estimate,
                }
            )
    p_holm = holm(np.array([t["p_value"] for t in tests]))
    for t, ph in zip(tests, p_holm):
        t["p_holm"] = float(ph)
    per_op = {}
    for o in OPERATORS:
        mine = [t for t in tests if t["operator"] == o]
        if not mine:
            continue
        best = min(mine, key=lambda t: t["p_holm"])
        per_op[o] = {
            "misfit": bool(best["p_holm"] <= alpha),
            "p_value": best["p_holm"],
            "test": best["test"],
            "stratum": best["stratum"],
        }
    p_min = float(np.nanmin(p_holm)) if tests else math.nan
    return {
        "method": (
            "score tests of a budget-dependent fidelity (phi exp(gamma log B)) and of a fidelity "
            "per stratum of raw evidence length, each operator, against the pooled fit; per-group "
            "orthogonalised scores, sign-flip randomisation over groups, Holm over all tests"
        ),
        "alpha": float(alpha),
        "n_groups": int(G),
        "misfit": bool(np.isfinite(p_min) and p_min <= alpha),
        "p_value": p_min,
        "tests": tests,
        "operators": per_op,
    }


def format_misfit(m: dict) -> str:
    """One line per verdict: ``misfit: yes/no (p = ...)`` naming the operator, test and stratum."""
    if not m["tests"]:
        return "misfit: not tested (no operator row informs a fidelity)"
    worst = min(m["tests"], key=lambda t: t["p_holm"])
    what = (
        f"{worst['operator']}, fidelity drifts with the budget "
        f"(x{worst['estimate']['phi_factor_per_doubling']:.2f} per doubling)"
        if worst["test"] == "budget"
        else f"{worst['operator']}, fidelity differs by evidence length (stratum {worst['stratum']})"
    )
    head = (
        f"misfit: {'yes' if m['misfit'] else 'no'} (p = {m['p_value']:.3g}, Holm over "
        f"{len(m['tests'])} score tests, {m['n_groups']} groups; "
        f"{'worst' if m['misfit'] else 'closest'}: {what})"
    )
    lines = [head]
    for o, x in m["operators"].items():
        lines.append(
            f"  {o:<10}{'yes' if x['misfit'] else 'no':<5}p = {x['p_value']:.3g} "
            f"({x['test']}, stratum {x['stratum']})"
        )
    return "\n".join(lines)


__all__ = ["MISFIT_ALPHA", "format_misfit", "misfit_tests"]
