"""The router over time on LoCoMo read as a stream (MODEL §10; issue 21 item 5).

Leave one conversation out: for each held-out conversation the router's parameters
(``oas.TimelineRouter``: the per-pass length ratios, ``v(k)`` and ``g``) are fitted on the other
conversations only, then the router runs on the held-out stream (``oas.route_stream``: it sees the
observed length of each unit at its current generation and predicts later passes with the fitted
ratios; it never reads a pass's output before choosing it). Its outcome is the lexical reader on
the packed context, as for the policies of `oas.real.timeline_utility` (same stream, same pass
chains, same packing), so per-conversation differences are paired.

Fitted on the training conversations, per operator (extractive passes; `pass_chain`):

* ``ratio_k = sum_s len_k(s) / sum_s len_{k-1}(s)`` over their sessions (pooled), ``k = 1..K``;
* ``g``: the share of questions answered correctly under ``retain-all`` at times when their
  evidence does not fit (every budget pooled);
* ``v(k) = P(correct | the context is the question's evidence sessions after k passes) - g``.

Statistics (docs/statistics.md): one value per conversation (the utility averaged over the
sessions that ask a question), the router's gain over each baseline as a Student-t interval on
``G - 1`` df (`retcon.inference.group_t_interval`) and an exact two-sided sign-flip p-value
(`retcon.inference.sign_flip_test`, ``G <= 16``).

References: MODEL §10, §2; docs/timeline.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from oas import ROUTER_POLICY, TimelineRouter, route_stream
from oas.real._timeline import (
    PassChains,
    _chains_for,
    _timeline_utility,
    chain_tables,
    context_accuracy,
    evidence_hits,
    stream_tables,
)
from oas.real._types import Conversation
from retcon.errors import InputError
from retcon.vocab import OPERATORS

BASELINES = ("retain-all", "overflow", "periodic", "budget-aware", "tiered")


class _Stats:
    """What one conversation contributes to a fit, per operator (sums, so folds pool them)."""

    def __init__(self, passes: int):
        self.len_sum = np.zeros(passes + 1)  # tokens of every unit after k passes
        self.hits = np.zeros(passes + 1)  # correct from the evidence sessions alone after k
        self.asked = 0.0  # questions with answer tokens and evidence sessions
        self.guess_hits = 0.0  # retain-all, evidence out of context: correct
        self.guess_n = 0.0


def conversation_stats(
    conversation: Conversation, chain: dict[str, list[str]], passes: int, ret_records: list
) -> _Stats:
    """One conversation's sums for `fit_timeline_router` (module docstring).

    ``ret_records``: `context_accuracy`'s records of ``retain-all`` at each budget.
    """
    st = _Stats(passes)
    order = [s.session_id for s in conversation.sessions]
    _, length = chain_tables(chain, order, passes)
    st.len_sum += length.sum(0)
    for ok in evidence_hits(conversation, chain, passes):
        st.asked += 1
        st.hits += np.asarray(ok, float)
    for records in ret_records:
        for fits, ok in records.values():
            if not fits:
                st.guess_n += 1
                st.guess_hits += ok
    return st


def fit_timeline_router(stats: Sequence[_Stats]) -> TimelineRouter:
    """`TimelineRouter` from the training conversations' pooled sums (module docstring)."""
    if not stats:
        raise InputError("fit_timeline_router: needs at least one training conversation.")
    lens = np.sum([s.len_sum for s in stats], axis=0)
    asked = sum(s.asked for s in stats)
    if asked == 0:
        raise InputError(
            "fit_timeline_router: the training conversations ask no answerable question."
        )
    hits = np.sum([s.hits for s in stats], axis=0)
    gn = sum(s.guess_n for s in stats)
    g = sum(s.guess_hits for s in stats) / gn if gn else 0.0
    # an empty pass (no tokens left) keeps a tiny ratio: the unit is as good as gone
    ratio = np.maximum(lens[1:], 1e-9) / np.maximum(lens[:-1], 1e-9)
    return TimelineRouter(hits / asked - g, ratio, g)


def _time_mean(acc: np.ndarray) -> np.ndarray:
    """Mean over the sessions that ask a question (``(..., T)`` -> ``(...)``)."""
    with np.errstate(invalid="ignore"):
        return np.nanmean(acc, axis=-1)


def timeline_router_report(
    conversations: Sequence[Conversation],
    *,
    passes: int = 4,
    budgets: Sequence[float] = (256.0, 1024.0, 4096.0),
    cap: float = 4096.0,
    level: float = 0.95,
    chains: PassChains | None = None,
) -> dict:
    """The router over time on LoCoMo, leave one conversation out, against the policies of
    `timeline_utility` (module docstring; ``chains``: the conversations' `pass_chains` when
    already built). MODEL §10.

    Returns a JSON-able dict: ``per_conversation`` (time-averaged utility of every policy),
    ``utility`` (mean over conversations with its t-interval per policy, operator, budget),
    ``gains`` (router minus each baseline: t-interval on ``G - 1`` df and sign-flip p-value),
    ``fits`` (each fold's fitted parameters) and a plain-words ``finding``.
    """
    from retcon.inference import group_t_interval, holm, sign_flip_test

    G = len(conversations)
    if G < 3:
        raise InputError(
            f"timeline_router_report: leave-one-out needs >= 3 conversations; got {G}."
        )
    nB = len(budgets)
    chains_all = _chains_for(chains, conversations, passes)
    base = []  # per conversation: {(policy, op): (nB, T)}
    stats = []  # per conversation: {op: _Stats}
    for c, chs in zip(conversations, chains_all):
        curves, ret_fit = _timeline_utility(
            c, chs, budgets, policies=BASELINES, cap=cap, passes=passes
        )
        base.append(curves)
        ret_records = [ret_fit[b] for b in budgets]  # retain-all's records at each budget
        stats.append({op: conversation_stats(c, chs[op], passes, ret_records) for op in OPERATORS})
    rows = [(p, None if p == "retain-all" else op) for p in BASELINES for op in OPERATORS]
    rows = list(dict.fromkeys(rows)) + [(ROUTER_POLICY, op) for op in OPERATORS]
    per = {r: np.full((G, nB), np.nan) for r in rows}
    fits = []
    for gi, (c, chs) in enumerate(zip(conversations, chains_all)):
        for r in rows:
            if r[0] != ROUTER_POLICY:
                per[r][gi] = _time_mean(base[gi][r])
        steps, order, answers, where = stream_tables(c)
        fold = {}
        for op in OPERATORS:
            router = fit_timeline_router([stats[j][op] for j in range(G) if j != gi])
            fold[op] = router.to_json()
            tokens, length = chain_tables(chs[op], order, passes)
            for bi, b in enumerate(budgets):
                gens = route_stream(length, router, b)
                acc, _ = context_accuracy(steps, order, tokens, length, gens, b, answers, where)
                per[(ROUTER_POLICY, op)][gi, bi] = _time_mean(acc)
        fits.append({"held_out": c.conversation_id, "routers": fold})
    utility = []
    for (policy, op), v in per.items():
        ci = group_t_interval(v, level=level)
        for bi, b in enumerate(budgets):
            utility.append(
                {
                    "policy": policy,
                    "operator": op,
                    "budget": float(b),
                    "utility": float(ci.estimate[bi]),
                    "lower": float(ci.lower[bi]),
                    "upper": float(ci.upper[bi]),
                }
            )
    gains = []
    for op in OPERATORS:
        mine = per[(ROUTER_POLICY, op)]
        for policy in BASELINES:
            d = mine - per[(policy, None if policy == "retain-all" else op)]
            ci = group_t_interval(d, level=level)
            p = sign_flip_test(d) if np.isfinite(d).all() else np.full(nB, np.nan)
            for bi, b in enumerate(budgets):
                gains.append(
                    {
                        "operator": op,
                        "budget": float(b),
                        "baseline": policy,
                        "gain": float(ci.estimate[bi]),
                        "lower": float(ci.lower[bi]),
                        "upper": float(ci.upper[bi]),
                        "sign_flip_p": float(p[bi]),
                        "wins": int(np.sum(d[:, bi] > 0)),
                        "losses": int(np.sum(d[:, bi] < 0)),
                    }
                )
    for policy in BASELINES:  # Holm over each baseline's operator x budget cells (a family)
        fam = [g for g in gains if g["baseline"] == policy]
        for g, adj in zip(fam, holm([g["sign_flip_p"] for g in fam])):
            g["holm_p"] = float(adj)
    return {
        "dataset": "locomo",
        "protocol": "leave one conversation out: the router is fitted on the other conversations",
        "conversations": G,
        "passes": passes,
        "budgets": [float(b) for b in budgets],
        "cap": cap,
        "level": level,
        "reader": "lexical",
        "per_conversation": {
            "ids": [c.conversation_id for c in conversations],
            "rows": [{"policy": p, "operator": op, "utility": per[(p, op)]} for (p, op) in rows],
        },
        "utility": utility,
        "gains": gains,
        "fits": fits,
        "finding": timeline_router_finding(gains),
    }


def timeline_router_finding(gains: Sequence[dict], alpha: float = 0.05) -> dict:
    """Plain words from the gains, per baseline: the cells where the router is better / worse,
    by the exact sign-flip test with Holm's adjustment over that baseline's cells (family-wise
    error <= ``alpha`` under the null that every conversation's difference is symmetric about 0;
    docs/statistics.md steps 3 and 5). ``beats``: some cell better and none worse; ``loses``: the
    reverse; ``mixed``: both; ``no difference shown``: neither (with 10 conversations an exact
    two-sided p-value is at least 2/1024, so a family of 9 cells can still reject)."""
    out = {}
    for policy in BASELINES:
        cells = [g for g in gains if g["baseline"] == policy]
        above = [g for g in cells if g.get("holm_p", 1.0) <= alpha and g["gain"] > 0]
        below = [g for g in cells if g.get("holm_p", 1.0) <= alpha and g["gain"] < 0]
        out[policy] = {
            "cells": len(cells),
            "above": len(above),
            "below": len(below),
            "answer": _answer(bool(above), bool(below)),
        }
    return out


def _answer(above: bool, below: bool) -> str:
    """The finding from whether some cell is better (``above``) and some worse (``below``)."""
    if above and below:
        return "mixed"
    return "beats" if above else "loses" if below else "no difference shown"


def timeline_router_error_rates(
    seed: int = 0,
    *,
    worlds: int = 2000,
    groups: int = 10,
    cells: int = 9,
    effects=(0.0, 0.5, 1.0, 1.41, 3.0),
    alpha: float = 0.05,
) -> list[dict]:
    """Error rates of `timeline_router_finding`'s rule in synthetic worlds where the truth is known.

    Per world: ``groups`` conversations x ``cells`` operator x budget cells of per-conversation
    differences ``d = effect + u_g + e_gc`` (``u_g``: a conversation effect shared by its cells, sd
    1; ``e``: cell noise, sd 1; so ``effect`` is in units of about 0.7 sd of ``d``), under two
    noise laws: ``normal`` (symmetric) and ``skewed`` (centred exponentials, which the sign-flip
    null does not cover). With ``effect = 0`` the share of worlds with any call (``beats``,
    ``loses`` or ``mixed``) is the family-wise false-call rate; otherwise the share called
    ``beats`` is the power. numpy ``default_rng(seed)``.
    """
    from retcon.inference import holm, sign_flip_test

    rng = np.random.default_rng(seed)
    out = []
    for law in ("normal", "skewed"):
        for eff in effects:
            calls = {"beats": 0, "loses": 0, "mixed": 0, "no difference shown": 0}
            for _ in range(worlds):
                if law == "normal":
                    u = rng.normal(size=(groups, 1))
                    e = rng.normal(size=(groups, cells))
                else:
                    u = rng.exponential(size=(groups, 1)) - 1.0
                    e = rng.exponential(size=(groups, cells)) - 1.0
                d = eff + u + e
                p = sign_flip_test(d)
                adj = holm(p)
                mean = d.mean(0)
                above = np.any((adj <= alpha) & (mean > 0))
                below = np.any((adj <= alpha) & (mean < 0))
                calls[_answer(bool(above), bool(below))] += 1
            row = {"law": law, "effect": float(eff), "worlds": worlds, "groups": groups}
            row.update({k: v / worlds for k, v in calls.items()})
            out.append(row)
    return out


__all__ = [
    "conversation_stats",
    "fit_timeline_router",
    "timeline_router_error_rates",
    "timeline_router_finding",
    "timeline_router_report",
]
