"""Tables 1, 7, 9 and 10 beside the paper's (MODEL §11), on constructed paired data: each figure
against an independent computation written here, and the paper's values taken from
``paper_checks._published``, never computed."""

from types import SimpleNamespace

import jax
import numpy as np
import pytest
from scipy import stats

from oas._features import FEATURE_NAMES
from paper_checks import _published as pub
from paper_checks.tables._tables_1_7_9_10 import TABLE_7_TYPES, table_1, table_7, table_9, table_10

FIT = FEATURE_NAMES.index("budget_fit_fraction")
COL = {"ret": 0, "merge": 1, "abstract": 2, "rewrite": 3}


def _paired(seed=0, n_conv=4, per_conv=8, budgets=(32, 64, 128, 256)):
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_conv):
        for q in range(per_conv):
            t = TABLE_7_TYPES[q % 4]
            for b in budgets:
                fit = rng.choice([0.0, 0.5, 1.0])
                rows.append((f"conv-{c}", f"q{c}-{q}", t, b, rng.integers(0, 2, 4), fit))
    features = np.zeros((len(rows), len(FEATURE_NAMES)))
    features[:, FIT] = [r[5] for r in rows]
    return SimpleNamespace(
        group_id=np.array([r[0] for r in rows]),
        query_id=np.array([r[1] for r in rows]),
        query_type=np.array([r[2] for r in rows]),
        budget=np.array([r[3] for r in rows], float),
        outcomes=np.array([r[4] for r in rows], float),
        features=features,
    )


def _t_interval(values, groups):
    means = np.array([values[groups == g].mean() for g in np.unique(groups)])
    half = stats.t.ppf(0.975, len(means) - 1) * means.std(ddof=1) / np.sqrt(len(means))
    return means.mean() - half, means.mean() + half


def _check(cell, values, groups, paper):
    assert cell["n"] == len(values)
    assert cell["ours"] == pytest.approx(values.mean(), abs=1e-6)
    lo, hi = cell["conversation_interval"]
    want = _t_interval(values, groups)
    if np.ptp([values[groups == g].mean() for g in np.unique(groups)]) > 0:
        assert (lo, hi) == pytest.approx(want, abs=1e-6)
    qlo, qhi = cell["question_interval"]
    assert qlo <= cell["ours"] <= qhi
    assert cell["paper"] == paper
    if paper is None:
        assert cell["difference"] is None and cell["paper_in_question_interval"] is None
    else:
        assert cell["difference"] == pytest.approx(values.mean() - paper, abs=1e-6)
        assert cell["paper_in_question_interval"] == (qlo <= paper <= qhi)


def test_table_1_splits_by_complete_fit():
    p = _paired()
    cells = table_1(jax.random.key(0), p, n_resamples=300)
    assert len(cells) == 12
    for c in cells:
        full = p.features[:, FIT] == 1.0
        rows = (p.budget == c["budget"]) & (full if c["stratum"] == "complete" else ~full)
        d = p.outcomes[rows, COL[c["operator"]]] - p.outcomes[rows, 0]
        _check(c, d, p.group_id[rows], pub.TABLE_1[(c["stratum"], c["operator"], c["budget"])])
        assert c["help_rate"] == pytest.approx((d > 0).mean(), abs=1e-6)
        assert c["harm_rate"] == pytest.approx((d < 0).mean(), abs=1e-6)
        assert c["paper_n"] == pub.TABLE_1_N[(c["stratum"], c["budget"])]


def test_table_7_by_type_at_256():
    p = _paired()
    cells = table_7(jax.random.key(1), p, n_resamples=300)
    assert [(c["type"], c["operator"]) for c in cells] == list(pub.TABLE_7)
    for c in cells:
        rows = p.budget == 256
        if c["type"] != "all":
            rows &= p.query_type == c["type"]
        d = p.outcomes[rows, COL[c["operator"]]] - p.outcomes[rows, 0]
        assert c["n"] == (8 if c["type"] != "all" else 32)
        _check(c, d, p.group_id[rows], pub.TABLE_7[(c["type"], c["operator"])])


def test_table_9_budget_pressure():
    p = _paired(budgets=(16, 32, 64, 128))
    cells = table_9(jax.random.key(2), p, n_resamples=300)
    assert len(cells) == 12
    for c in cells:
        rows = p.budget == c["budget"]
        f = p.features[rows, FIT]
        v = {"mean fit": f, "full fit": f == 1.0, "zero fit": f == 0.0}[c["row"]].astype(float)
        _check(c, v, p.group_id[rows], pub.TABLE_9.get((c["row"], c["budget"])))
    assert all(c["paper"] is None for c in cells if c["budget"] == 16)  # not in the paper's grid


def test_table_10_operator_against_operator():
    p = _paired()
    cells = table_10(jax.random.key(3), p, n_resamples=300)
    assert [(c["row"], c["budget"]) for c in cells] == list(pub.TABLE_10)
    for c in cells:
        first, second = c["row"].split(" - ")
        rows = p.budget == c["budget"]
        d = p.outcomes[rows, COL[first]] - p.outcomes[rows, COL[second]]
        paper = pub.TABLE_10[(c["row"], c["budget"])]
        _check(c, d, p.group_id[rows], paper.value)
        assert c["paper_interval"] == (None if paper.lo is None else [paper.lo, paper.hi])


def test_a_missing_stratum_is_reported_not_invented():
    p = _paired(budgets=(128,))
    p.features[:, FIT] = 1.0  # every question fits whole: the incomplete stratum is empty
    cells = table_1(jax.random.key(0), p, n_resamples=100)
    empty = [c for c in cells if c["stratum"] == "incomplete" or c["budget"] == 256]
    assert empty and all(c["n"] == 0 and c["ours"] is None for c in empty)
    assert all(c["difference"] is None and c["help_rate"] is None for c in empty)
