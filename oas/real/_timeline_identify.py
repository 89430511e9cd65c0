"""Prediction over time on LoCoMo (MODEL §10; issue 21, item 4): leave one conversation out.

`retcon identify` fits §2's reader on some conversations and predicts the crossover budget ``B*``
of the others. Over time the same question is asked of the pass chain: fitted on the other
conversations, does theory predict a held-out conversation's crossover time ``t*_o(B)`` and its
best number of passes ``k*(B)``?

* Fit (training conversations, per operator; extractive passes as in `timeline_report`): the
  answer survival ``S_k`` and the length ratio ``R_k`` after ``k`` passes, pooled
  (`fit_pass_chain`). Two chains are read off them: ``h10`` (H10's compounding: ``phi`` the
  binomial maximum-likelihood geometric fit of `survival_report`, ``rho`` the least-squares fit of
  ``ln R_k = k ln rho``; chain ``(phi^k, rho^k)``) and ``per-pass`` (``(S_k, R_k)`` as measured,
  which may level off).
* Predict (held-out conversation, from what exists before any pass: its session lengths and
  number of sessions ``T``): the session-length law is a gamma law matched to its raw session
  lengths (moments); ``t*`` is `theory.crossover_time` with the chain's first pass
  (``R_1``, ``S_1``), uniform ages, horizon ``T``; ``k*`` is `theory.stream_best_generation` at
  session ``T`` over ``k = 0 .. K``. Neither depends on the reader's ``a`` or ``g``.
* Observe (held-out conversation): ``t*`` is the first session where ``periodic`` (every unit
  passed once) beats ``retain-all`` in lexical accuracy of the questions asked
  (`theory.first_positive_time` on the conversation's own curve); ``k*`` is the number of passes
  of every unit with the best accuracy at the last session (smallest on ties).
* Compare (few groups, docs/statistics.md): per chain, quantity, operator and budget, the
  held-out residuals ``observed - predicted`` of the ``G`` conversations: exact agreement, the mean
  residual (bias) with its Student-t interval on ``G - 1`` df and the exact sign-flip p-value,
  Holm-adjusted over the cells of a chain and quantity (the misfit statement: some adjusted
  p-value <= 0.05). Each held-out conversation also gets a predictive interval for its observed
  value, built without it: ``predicted + mean(r) +- t_{n-1} sd(r) sqrt(1 + 1/n)`` over the other
  conversations' held-out residuals ``r``; the coverage of those intervals is reported.

References: MODEL §10, §2; docs/timeline.md ("Prediction over time"), docs/identify.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from oas.real._text import make_tokenizer
from oas.real._timeline import (
    GENERATION_POLICY,
    PassChains,
    Survival,
    _chains_for,
    _fit,
    _params,
    check_passes,
    survival,
    timeline_utility,
)
from oas.real._types import Conversation
from retcon.errors import InputError
from retcon.vocab import OPERATORS

#: The pass chains a prediction can use (module docstring).
CHAINS = ("h10", "per-pass")
#: What is predicted: the crossover time and the best number of passes.
QUANTITIES = ("crossover_time", "best_generation")
IDENTIFY_BUDGETS = (256.0, 512.0, 1024.0, 2048.0, 4096.0)


class PassChainFit(NamedTuple):
    """One operator's pass chain fitted on some conversations.

    Attributes:
      support: ``(K + 1,)`` pooled answer survival ``S_k`` (``S_0 = 1``).
      ratio: ``(K + 1,)`` pooled unit length after ``k`` passes over the raw length (``R_0 = 1``).
      phi, rho: H10's per-pass fidelity (geometric maximum likelihood) and compression
        (least squares on ``ln R_k``).
    """

    support: np.ndarray
    ratio: np.ndarray
    phi: float
    rho: float


def fit_pass_chain(survived, at_risk, lengths) -> PassChainFit:
    """Fit a pass chain on per-conversation counts (`oas.real.survival`'s arrays).

    Args:
      survived: ``(G, K + 1)`` questions still answerable after ``k`` passes.
      at_risk: ``(G,)`` questions answerable from the raw evidence.
      lengths: ``(G, K + 1)`` mean unit length after ``k`` passes.

    References: MODEL §10 (H10).
    """
    y = np.asarray(survived, np.float64)
    n = np.asarray(at_risk, np.float64)
    ln = np.asarray(lengths, np.float64)
    if y.ndim != 2 or y.shape[1] < 2 or n.shape != y.shape[:1] or ln.shape != y.shape:
        raise InputError(
            "fit_pass_chain: survived and lengths must be (G, K + 1) with K >= 1 and at_risk "
            f"(G,); got {y.shape}, {n.shape}, {ln.shape}."
        )
    if n.sum() <= 0 or ln[:, 0].sum() <= 0:
        raise InputError("fit_pass_chain: no question at risk or no raw length to fit on.")
    support = y.sum(0) / n.sum()
    support[0] = 1.0
    ratio = ln.sum(0) / ln[:, 0].sum()
    keep = n > 0
    phi = _params(_fit("geometric", y[keep], n[keep]))["phi"]
    k = np.arange(1, y.shape[1], dtype=np.float64)
    log_r = np.log(np.maximum(ratio[1:], 1e-12))
    rho = float(math.exp(float(k @ log_r) / float(k @ k)))
    return PassChainFit(support, ratio, float(phi), rho)


def chain_arrays(fit: PassChainFit, chain: str) -> tuple[np.ndarray, np.ndarray]:
    """``(support, ratio)`` for ``k = 0 .. K`` of the named chain (`CHAINS`)."""
    import theory

    if chain == "h10":
        return theory.h10_chain(fit.rho, fit.phi, fit.support.size - 1)
    if chain == "per-pass":
        return fit.support, fit.ratio
    raise InputError(f"chain_arrays: chain must be one of {list(CHAINS)}; got {chain!r}.")


def session_length_law(lengths):
    """The gamma law with the sessions' mean and variance (a point mass when they are equal)."""
    import theory

    x = np.asarray(lengths, np.float64)
    x = x[x > 0]
    if x.size == 0:
        raise InputError("session_length_law: no session with a positive length.")
    mean, var = float(x.mean()), float(x.var(ddof=1)) if x.size > 1 else 0.0
    if var <= 1e-9 * mean**2:
        return theory.make_length_dist("point", length=mean)
    return theory.make_length_dist("gamma", shape=mean**2 / var, scale=var / mean)


_OPEN = 1e-9  # keeps a measured first pass that lost nothing (S_1 = 1) inside theory's (0, 1)


def predict_timeline(fit: PassChainFit, session_lengths, budgets) -> dict[str, dict]:
    """Theory's ``t*`` and ``k*`` per budget for a conversation with these raw session lengths.

    Returns:
      ``{chain: {"crossover_time": (m,) float (NaN: none within the T sessions),
      "best_generation": (m,) int}}``.

    References: MODEL §10; module docstring.
    """
    import theory

    lengths = np.asarray(session_lengths, np.float64)
    horizon = int(lengths.size)
    dist = session_length_law(lengths)
    b = np.asarray(budgets, np.float64)
    out = {}
    for chain in CHAINS:
        support, ratio = chain_arrays(fit, chain)
        ct = theory.crossover_time(
            dist,
            b,
            age_law="uniform",
            compress_ratio=float(np.clip(ratio[1], _OPEN, 1 - _OPEN)),
            fidelity=float(np.clip(support[1], _OPEN, 1 - _OPEN)),
            acc_raw=1.0,
            acc_guess=0.0,
            horizon=horizon,
        )
        best = theory.stream_best_generation(
            dist, b, horizon, support=support, ratio=ratio, age_law="uniform"
        )
        out[chain] = {
            "crossover_time": np.asarray(ct.crossover_time, np.float64),
            "best_generation": best.best_generation.astype(np.float64),
        }
    return out


def observed_timeline(
    conversation: Conversation, chains: dict, budgets: Sequence[float], passes: int
) -> dict:
    """The conversation's own ``t*`` and ``k*`` per operator and budget (module docstring).

    Returns:
      ``{"crossover_time": {op: (m,)}, "best_generation": {op: (m,)},
      "utility_by_generation": {op: (m, K + 1)}}`` (accuracy at the last session).
    """
    import theory

    policies = ("periodic", *[f"{GENERATION_POLICY}{k}" for k in range(2, passes + 1)])
    curves = timeline_utility(
        conversation, chains, budgets, policies=policies, cap=max(budgets), passes=passes
    )
    ret = curves[("retain-all", None)]
    out: dict = {"crossover_time": {}, "best_generation": {}, "utility_by_generation": {}}
    for op in OPERATORS:
        per = curves[("periodic", op)]
        out["crossover_time"][op] = theory.first_positive_time(np.nan_to_num(per - ret))
        by_k = [ret[:, -1], per[:, -1]] + [
            curves[(f"{GENERATION_POLICY}{k}", op)][:, -1] for k in range(2, passes + 1)
        ]
        u = np.stack(by_k, axis=1)  # (m, K + 1)
        top = np.nanmax(u, axis=1, keepdims=True)
        out["best_generation"][op] = np.argmax(u >= top - 1e-12, axis=1).astype(np.float64)
        out["utility_by_generation"][op] = u
    return out


def compare_held_out(predicted, observed, *, level: float = 0.95) -> dict:
    """Held-out predictions against observations for one cell over ``G`` conversations.

    Args:
      predicted, observed: ``(G,)`` values (NaN: no crossover within the conversation).

    Returns:
      a dict: ``n`` (pairs with both values), ``agree`` (share of the ``G`` conversations where
      the two are equal, both-none included), ``status_mismatch`` (one none, the other not),
      ``mean_abs_error``, ``bias`` (mean residual ``observed - predicted``) with ``lower``,
      ``upper`` (Student-t on ``n - 1`` df) and ``p_value`` (exact sign flip, two-sided),
      per-conversation ``intervals`` (predictive, built without the conversation: module
      docstring) and their ``coverage``.

    References: docs/statistics.md (few groups).
    """
    from scipy.special import stdtrit

    from retcon.inference import group_t_interval, sign_flip_test

    p = np.asarray(predicted, np.float64)
    o = np.asarray(observed, np.float64)
    both = np.isfinite(p) & np.isfinite(o)
    r = np.where(both, o - p, np.nan)
    agree = np.where(both, np.isclose(p, o), ~np.isfinite(p) & ~np.isfinite(o))
    res: dict = {
        "n": int(both.sum()),
        "agree": float(agree.mean()),
        "status_mismatch": int((np.isfinite(p) != np.isfinite(o)).sum()),
    }
    if both.sum() >= 2:
        gi = group_t_interval(r[both], level=level)
        res.update(
            mean_abs_error=float(np.abs(r[both]).mean()),
            bias=float(gi.estimate[0]),
            lower=float(gi.lower[0]),
            upper=float(gi.upper[0]),
            p_value=float(sign_flip_test(r[both])[0]),
        )
    else:
        res.update(mean_abs_error=math.nan, bias=math.nan, lower=math.nan, upper=math.nan)
        res["p_value"] = math.nan
    intervals, covered = [], []
    for i in range(p.size):
        others = r[np.isfinite(r) & (np.arange(p.size) != i)]
        if not np.isfinite(p[i]) or others.size < 2:
            intervals.append((math.nan, math.nan))
            continue
        m, sd = float(others.mean()), float(others.std(ddof=1))
        half = (
            float(stdtrit(others.size - 1, 0.5 + level / 2)) * sd * math.sqrt(1 + 1 / others.size)
        )
        lo, hi = p[i] + m - half, p[i] + m + half
        intervals.append((lo, hi))
        if np.isfinite(o[i]):
            covered.append(lo - 1e-9 <= o[i] <= hi + 1e-9)
    res["intervals"] = intervals
    res["coverage"] = float(np.mean(covered)) if covered else math.nan
    res["covered"] = int(np.sum(covered))
    res["with_interval"] = len(covered)
    return res


def timeline_identify(
    conversations: Sequence[Conversation],
    *,
    passes: int = 4,
    budgets: Sequence[float] = IDENTIFY_BUDGETS,
    level: float = 0.95,
    chains: PassChains | None = None,
) -> dict:
    """Leave one conversation out: theory's ``t*`` and ``k*`` against the observed ones
    (``chains``: the conversations' `pass_chains` when already built).

    Returns the JSON-ready report (module docstring; docs/timeline.md). MODEL §10.
    """
    from retcon.inference import holm

    check_passes(passes, least=2)
    g = len(conversations)
    if g < 3:
        raise InputError(
            f"--identify needs at least 3 conversations (leave one out); the data hold {g}."
        )
    b = [float(x) for x in budgets]
    tok = make_tokenizer("regex")
    stats: dict[str, list] = {op: [] for op in OPERATORS}
    session_lengths, observed = [], []
    for c, chs in zip(conversations, _chains_for(chains, conversations, passes)):
        for op in OPERATORS:
            stats[op].append(survival([c], op, passes, "extractive", chains=[chs[op]]))
        session_lengths.append(
            np.array([tok.count(chs[OPERATORS[0]][s.session_id][0]) for s in c.sessions], float)
        )
        observed.append(observed_timeline(c, chs, b, passes))
    # predictions, one conversation held out at a time
    pred = {
        ch: {q: {op: np.full((g, len(b)), np.nan) for op in OPERATORS} for q in QUANTITIES}
        for ch in CHAINS
    }
    obs = {q: {op: np.stack([o[q][op] for o in observed]) for op in OPERATORS} for q in QUANTITIES}
    fits: dict = {op: [] for op in OPERATORS}
    for i in range(g):
        rest = [j for j in range(g) if j != i]
        for op in OPERATORS:
            fit = _pooled_fit([stats[op][j] for j in rest])
            fits[op].append(fit)
            for ch, vals in predict_timeline(fit, session_lengths[i], b).items():
                for q in QUANTITIES:
                    pred[ch][q][op][i] = vals[q]
    cells = []
    for ch in CHAINS:
        for q in QUANTITIES:
            block = []
            for op in OPERATORS:
                for bi, bud in enumerate(b):
                    cmp = compare_held_out(pred[ch][q][op][:, bi], obs[q][op][:, bi], level=level)
                    block.append(
                        {
                            "chain": ch,
                            "quantity": q,
                            "operator": op,
                            "budget": bud,
                            "predicted": pred[ch][q][op][:, bi],
                            "observed": obs[q][op][:, bi],
                            **cmp,
                        }
                    )
            adj = holm([c["p_value"] for c in block])
            for c, a in zip(block, adj, strict=True):
                c["p_holm"] = float(a)
            cells += block
    misfit = {}
    for ch in CHAINS:
        for q in QUANTITIES:
            block = [c for c in cells if c["chain"] == ch and c["quantity"] == q]
            ps = [c["p_holm"] for c in block if math.isfinite(c["p_holm"])]
            worst = min(block, key=lambda c: c["p_holm"] if math.isfinite(c["p_holm"]) else 2.0)
            misfit[f"{ch}/{q}"] = {
                "misfit": bool(ps and min(ps) <= 0.05),
                "p_holm": float(min(ps)) if ps else math.nan,
                "operator": worst["operator"],
                "budget": worst["budget"],
                "cells": len(block),
                "agree": float(np.mean([c["agree"] for c in block])),
                "coverage": _pooled_coverage(block),
            }
    full = {}
    for op in OPERATORS:
        f = _pooled_fit(stats[op])
        full[op] = {"support": f.support, "ratio": f.ratio, "phi": f.phi, "rho": f.rho}
    return {
        "dataset": "locomo",
        "conversations": g,
        "conversation_ids": [c.conversation_id for c in conversations],
        "sessions": [int(x.size) for x in session_lengths],
        "passes": passes,
        "budgets": b,
        "level": level,
        "reader": "lexical",
        "first_pass": "extractive",
        "age_law": "uniform",
        "fits": full,
        "fits_held_out_range": {
            op: {
                "phi": [min(f.phi for f in fits[op]), max(f.phi for f in fits[op])],
                "rho": [min(f.rho for f in fits[op]), max(f.rho for f in fits[op])],
            }
            for op in OPERATORS
        },
        "cells": cells,
        "misfit": misfit,
        "utility_by_generation": {
            op: np.stack([o["utility_by_generation"][op] for o in observed]) for op in OPERATORS
        },
    }


def _pooled_fit(stats) -> PassChainFit:
    """`fit_pass_chain` on the pooled counts of several conversations' `survival`."""
    return fit_pass_chain(
        *(np.concatenate([getattr(x, f) for x in stats]) for f in Survival._fields)
    )


def _pooled_coverage(block) -> dict:
    cov = sum(c["covered"] for c in block)
    n = sum(c["with_interval"] for c in block)
    return {"covered": int(cov), "intervals": int(n), "share": cov / n if n else math.nan}


# --------------------------------------------------------------------------- synthetic worlds


def synthetic_conversation(rng, *, support, ratio, sessions, per_session, shape, mean):
    """One synthetic conversation whose truth is set: i.i.d. gamma session lengths, ``per_session``
    questions about each session (asked from that session on), a question surviving ``k`` passes
    iff its uniform draw is below ``support[k]`` (nested passes), units of ``ratio[k]`` times
    their raw length. Returns ``(survived (K + 1,), at_risk, lengths (K + 1,), session lengths,
    ok (T, K + 1) per session and pass: how many of its questions survive)``."""
    lengths = rng.gamma(shape, mean / shape, sessions)
    u = rng.uniform(size=(sessions, per_session))
    ok = (u[:, :, None] < np.asarray(support)[None, None, :]).sum(1)  # (T, K + 1)
    survived = ok.sum(0).astype(float)
    return survived, float(sessions * per_session), lengths.mean() * np.asarray(ratio), lengths, ok


def synthetic_observed(lengths, ok, per_session, budgets, ratio) -> dict:
    """``t*`` and ``k*`` observed in a synthetic conversation, as `observed_timeline` reads them
    on text: prefix packing most recent first (the query about session ``s`` at time ``t`` is
    answered iff sessions ``s..t`` fit after ``k`` passes, and it survived them)."""
    import theory

    T, K1 = ok.shape
    acc = np.zeros((len(budgets), K1, T))  # accuracy of the questions asked at t, k passes
    for t in range(1, T + 1):
        newer = np.cumsum(lengths[:t][::-1])[::-1]  # newer[s] = L_s + .. + L_{t-1}
        for bi, b in enumerate(budgets):
            fit = newer[None, :] * np.asarray(ratio)[:, None] <= b  # (K + 1, t)
            acc[bi, :, t - 1] = (fit * ok[:t].T).sum(1) / (t * per_session)
    d = acc[:, 1] - acc[:, 0]
    last = acc[:, :, -1]
    top = last.max(1, keepdims=True)
    return {
        "crossover_time": theory.first_positive_time(d),
        "best_generation": np.argmax(last >= top - 1e-12, axis=1).astype(np.float64),
    }


def identify_operating(
    seed: int,
    *,
    worlds: int = 50,
    truth: str = "h10",
    n_groups: int = 10,
    passes: int = 4,
    budgets: Sequence[float] = (1024.0, 4096.0),
    per_session: int = 4,
) -> dict:
    """Error rates of `timeline_identify`'s rules in synthetic worlds where the truth is known.

    ``truth``: ``h10`` (survival ``0.6^k``, length ``0.3^k``: H10 holds, so neither chain should
    say misfit) or ``levels-off`` (survival ``0.25 + 0.75 * 0.35^k``, length ratio ``0.3, 0.12,
    0.1, 0.1``: H10's chain is wrong for ``k*``). Per world: ``G`` conversations of 19 to 32
    sessions (gamma lengths, mean 760 tokens, shape 4: LoCoMo-like), the leave-one-out fit,
    prediction and comparison of `timeline_identify`.

    Returns:
      ``{chain/quantity: {"misfit_rate", "coverage", "agree"}}`` over the worlds.
    """
    k = np.arange(passes + 1, dtype=np.float64)
    if truth == "h10":
        support, ratio = 0.6**k, 0.3**k
    elif truth == "levels-off":
        support = 0.25 + 0.75 * 0.35**k
        ratio = np.array([1.0, 0.3, 0.12, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])[: passes + 1]
    else:
        raise InputError(f"identify_operating: truth must be h10 or levels-off; got {truth!r}.")
    from retcon.inference import holm

    rng = np.random.default_rng(seed)
    b = [float(x) for x in budgets]
    tally: dict = {
        f"{ch}/{q}": {"misfit": [], "covered": 0, "intervals": 0, "agree": []}
        for ch in CHAINS
        for q in QUANTITIES
    }
    for _ in range(worlds):
        convs = []
        for _g in range(n_groups):
            T = int(rng.integers(19, 33))
            convs.append(
                synthetic_conversation(
                    rng,
                    support=support,
                    ratio=ratio,
                    sessions=T,
                    per_session=per_session,
                    shape=4.0,
                    mean=760.0,
                )
            )
        obs = [synthetic_observed(c[3], c[4], per_session, b, ratio) for c in convs]
        pred = {ch: {q: np.full((n_groups, len(b)), np.nan) for q in QUANTITIES} for ch in CHAINS}
        for i in range(n_groups):
            rest = [j for j in range(n_groups) if j != i]
            fit = fit_pass_chain(
                np.stack([convs[j][0] for j in rest]),
                np.array([convs[j][1] for j in rest]),
                np.stack([convs[j][2] for j in rest]),
            )
            for ch, vals in predict_timeline(fit, convs[i][3], b).items():
                for q in QUANTITIES:
                    pred[ch][q][i] = vals[q]
        for ch in CHAINS:
            for q in QUANTITIES:
                o = np.stack([x[q] for x in obs])
                cmp = [compare_held_out(pred[ch][q][:, bi], o[:, bi]) for bi in range(len(b))]
                adj = holm([c["p_value"] for c in cmp])
                t = tally[f"{ch}/{q}"]
                t["misfit"].append(
                    bool(np.nanmin(adj) <= 0.05) if np.isfinite(adj).any() else False
                )
                t["covered"] += sum(c["covered"] for c in cmp)
                t["intervals"] += sum(c["with_interval"] for c in cmp)
                t["agree"].append(float(np.mean([c["agree"] for c in cmp])))
    return {
        key: {
            "misfit_rate": float(np.mean(t["misfit"])),
            "coverage": t["covered"] / t["intervals"] if t["intervals"] else math.nan,
            "agree": float(np.mean(t["agree"])),
            "worlds": worlds,
        }
        for key, t in tally.items()
    }
