"""The data gates (``paper_checks.rules._gates``): rows that cannot test a claim are named NOT
TESTABLE with the reason, before any rule reads them (MODEL §3: ``U_B(a)`` is a mean of
paired outcomes; a constant outcome makes every contrast 0 whatever the truth)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paper_checks.rules._gates import first_closed, groups_gate, identical_actions, outcome_gate
from retcon.errors import InputError

NAMES = ("ret", "merge", "abstract", "rewrite")


def test_never_right_and_always_right_are_not_testable():
    for value, words in ((0.0, "answered no question correctly"), (1.0, "every question")):
        y = np.full((40, 4), value)
        g = outcome_gate(y, np.repeat([16, 32, 64, 128], 10), who="the lexical reader")
        assert not g.testable and words in g.reason and "the lexical reader" in g.reason


def test_variance_in_one_needed_cell_is_enough():
    b = np.repeat([16, 32, 64, 128], 10)
    y = np.zeros((40, 4))
    y[b == 64, 1] = 1.0  # varies at 64 only
    assert outcome_gate(y, b).testable  # every cell needed
    closed = outcome_gate(y, b, needed=[16, 128])
    assert not closed.testable and "16 and 128" in closed.reason
    y[b == 128] = 1.0  # all wrong at 16, all right at 128: still no contrast in either
    mixed = outcome_gate(y, b, needed=[16, 128])
    assert not mixed.testable and "all wrong at 16" in mixed.reason
    assert "all right at 128" in mixed.reason
    missing = outcome_gate(y, b, needed=[16, 256])
    assert not missing.testable and "no row at 256" in missing.reason


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_testable_exactly_when_some_needed_cell_varies(n, n_cells, seed):
    """Against the definition: a brute-force scan of each needed cell's finite outcomes."""
    rng = np.random.default_rng(seed)
    y = (rng.uniform(size=(n, 4)) < rng.choice([0.0, 0.05, 0.5, 1.0])).astype(float)
    cell = rng.integers(0, n_cells, n)
    varies = any(len(set(y[cell == c].ravel().tolist())) > 1 for c in range(n_cells))
    assert outcome_gate(y, cell, needed=range(n_cells)).testable == varies


def test_identical_actions_named_once():
    rng = np.random.default_rng(0)
    y = (rng.uniform(size=(30, 4)) < 0.4).astype(float)
    y[:, 3] = y[:, 1]  # rewrite = merge (offline, the same text)
    got = identical_actions(y, NAMES)
    assert got.distinct == ("ret", "merge", "abstract")
    assert got.same == (("merge", "rewrite"),)
    assert got.words.startswith("merge and rewrite are the same records here")
    assert got.first == {"rewrite": "merge"}
    y[:, 2] = y[:, 1]
    three = identical_actions(y, NAMES)
    assert three.distinct == ("ret", "merge") and three.same == (("merge", "abstract", "rewrite"),)
    assert three.first == {"abstract": "merge", "rewrite": "merge"}
    assert "merge, abstract and rewrite" in three.words
    y = (rng.uniform(size=(30, 4)) < 0.4).astype(float)
    y[0] = [0.0, 0.0, 1.0, 1.0]  # differ on one row at least
    y[1] = [0.0, 1.0, 0.0, 0.0]
    y[2] = [1.0, 0.0, 0.0, 1.0]
    none = identical_actions(y, NAMES)
    assert none.distinct == NAMES and none.same == () and none.words == "" and none.first == {}


def test_identical_operators_ignore_retention_and_count_nan_as_equal():
    """Claim 5 asks among the operators only (``identical_actions`` on the operator columns): an
    operator equal to retention is not folded into it there, and NaN equals NaN (MODEL §6.5)."""
    rng = np.random.default_rng(1)
    y = (rng.uniform(size=(30, 4)) < 0.4).astype(float)
    y[:, 2] = y[:, 0]  # abstract = ret: not an operator twin
    y[:, 3] = y[:, 1]
    y[:5, [1, 3]] = np.nan  # merge and rewrite both missing on the same rows
    ops = identical_actions(y[:, 1:], NAMES[1:])
    assert ops.first == {"rewrite": "merge"}
    assert identical_actions(y, NAMES).first == {"abstract": "ret", "rewrite": "merge"}


def test_too_few_groups_names_the_count():
    g = groups_gate(["c1"] * 5, 2)
    assert not g.testable and "1 group " in g.reason and "at least 2" in g.reason
    assert groups_gate(["a", "b", "c"], 3).testable
    assert first_closed(outcome_gate(np.eye(4)), g) == g
    assert first_closed(outcome_gate(np.eye(4))).testable


def test_bad_shapes_are_refused():
    with pytest.raises(InputError, match="shape"):
        outcome_gate(np.zeros(5))
    with pytest.raises(InputError, match="rows"):
        outcome_gate(np.eye(4), [1, 2])
    with pytest.raises(InputError, match="shape"):
        identical_actions(np.zeros((3, 2)), NAMES)
