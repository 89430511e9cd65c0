"""Claim 1's reversal rule (the max-T sign-flip endpoint rule, ``rules._reversal``) at LoCoMo's size (10 conversations, LoCoMo's spread between them;
``operating.locomo_shaped_data``) in worlds the verdicts' own simulations do not build: the
issue-30 acceptance checks. The true world has the paper's Table 3 effects (MODEL §11) on the
data's grid (``_effects.paper_curves``); the null worlds have no reversal in the mean:
operators equal to retention, mean-zero heterogeneity between conversations (normal and t with
2 df), one outlier conversation carrying the whole effect, and a gain at one budget only.
100 data sets per world."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from paper_checks import _effects as E
from paper_checks import operating as O
from paper_checks._types import PASS
from paper_checks.rules import _reversal as R
from retcon.inference import group_delta_curves
from tests._references.reversal_bonferroni import bonferroni_grid_reversal

B = np.array(O.LOCOMO_BUDGETS)
G = 10
N = 100
T3 = E.paper_curves(B, ["abstract", "merge"], "Table 3")
T4 = E.paper_curves(B, ["abstract", "merge"], "Table 4")


def _dataset(key, per_group) -> np.ndarray:
    """Per-conversation ``dU`` ``(G, 2, m)`` of row-level data whose conversation ``g`` has
    true ``dU`` ``per_group[g]`` ``(2, m)``, 50 questions each, LoCoMo's spread."""
    ys, gs, bs = [], [], []
    for g in range(G):
        y, _, bb = O.locomo_shaped_data(jax.random.fold_in(key, g), per_group[g], n_groups=1)
        ys.append(y)
        gs.append(np.full(y.shape[0], g))
        bs.append(bb)
    y, grp, bb = np.concatenate(ys), np.concatenate(gs), np.concatenate(bs)
    return group_delta_curves(y, grp, bb, B)[:, :2]


def _world(name: str, key) -> np.ndarray:
    """``(G, 2, m)`` true per-conversation ``dU`` of world ``name``."""
    z = np.asarray(jax.random.normal(key, (G,)), float)
    t2 = np.asarray(jax.random.t(key, 2.0, (G,)), float)
    zero = np.zeros((G, *T3.shape))
    if name == "paper (Table 3)":
        return zero + T3
    if name == "paper (Table 4)":
        return zero + T4
    if name == "equal to ret":
        return zero
    if name == "heterogeneous, mean 0":
        return zero + 0.05 * z[:, None, None]
    if name == "t2 conversations, mean 0":
        return zero + 0.03 * np.clip(t2, -10, 10)[:, None, None]
    if name == "one outlier conversation":
        out = zero.copy()
        out[0] = T3
        return out
    if name == "gain at one budget only":
        out = zero.copy()
        out[:, :, 0] = T3[:, 0]
        return out
    raise ValueError(name)


def _pass_rate(world: str, seed: int, rule: str = "max-T") -> float:
    key = jax.random.PRNGKey(seed)
    hits = 0
    for i in range(N):
        k = jax.random.fold_in(key, i)
        d = _dataset(jax.random.fold_in(k, 1), _world(world, jax.random.fold_in(k, 2)))
        if rule == "max-T":
            hits += R.reversal_verdict(B, {"r": d}).verdict == PASS
        else:  # the rule before issue 46: Bonferroni t-tests over the whole grid
            hits += bonferroni_grid_reversal(B, d)
    return hits / N


@pytest.mark.slow
def test_claim1_detects_the_papers_table3_reversal_at_G10():
    assert _pass_rate("paper (Table 3)", 301) >= 0.80


@pytest.mark.slow
@pytest.mark.parametrize(
    "world",
    [
        "equal to ret",
        "heterogeneous, mean 0",
        "t2 conversations, mean 0",
        "one outlier conversation",
        "gain at one budget only",
    ],
)
@pytest.mark.parametrize("rule", ["max-T", "before"])
def test_claim1_rarely_passes_in_null_worlds_at_G10(world, rule):
    assert _pass_rate(world, 302, rule) <= 0.05


@pytest.mark.slow
def test_max_t_rule_passes_at_least_as_often_as_before_at_the_papers_table4_effect():
    """The max-T endpoint rule against the Bonferroni grid rule it replaced, on the same data sets
    at the paper's LoCoMo effect (Table 4), whose loose-budget losses are 3-4 points: measured
    0.59 against 0.42 (seed 303, 100 data sets); neither reaches 80% at G = 10."""
    new, before = _pass_rate("paper (Table 4)", 303), _pass_rate("paper (Table 4)", 303, "before")
    assert new >= before + 0.1 and new >= 0.5
