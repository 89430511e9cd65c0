"""The one evidence-length stratification rule (MODEL §6.5): edges, ties and renumbering,
against a brute-force reference written from the rule's statement."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oas import length_strata
from retcon.errors import InputError


def _reference(lengths, qids, k):
    """The rule spelled out: per-question quantile edges, [lower, upper) bins, the last open
    above, empty bins dropped."""
    per_q = {}
    for q, x in zip(qids, lengths):
        per_q.setdefault(q, x)
    edges = list(np.quantile(sorted(per_q.values(), key=float), np.linspace(0, 1, k + 1)))
    edges[-1] = np.inf
    bins = []
    for x in lengths:
        s = max(0, min(k - 1, sum(1 for e in edges[:-1] if e <= x) - 1))
        bins.append(s)
    used = sorted(set(bins))
    return [used.index(b) for b in bins], [edges[u] for u in used], [edges[u + 1] for u in used]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=12),  # budget rows per question
    st.lists(st.sampled_from([8.0, 20.0, 20.0, 55.0, 300.0, 1200.0]), min_size=12, max_size=12),
    st.integers(1, 5),
)
def test_matches_the_stated_rule(rows_per_q, pool, k):
    lengths, qids = [], []
    for q, r in enumerate(rows_per_q):
        lengths += [pool[q]] * r
        qids += [f"q{q}"] * r
    got = length_strata(lengths, qids, k)
    stratum, lower, upper = _reference(lengths, qids, k)
    np.testing.assert_array_equal(got.stratum, stratum)
    np.testing.assert_array_equal(got.lower, lower)
    np.testing.assert_array_equal(got.upper, upper)
    assert got.upper[-1] == np.inf and len(got.median) <= k
    assert set(got.stratum.tolist()) == set(range(len(got.median)))  # none empty
    for s in range(len(got.median)):  # closed below, open above
        x = np.asarray(lengths)[got.stratum == s]
        assert np.all((got.lower[s] <= x) & (x < got.upper[s]))


def test_edges_ties_and_the_longest_question():
    # 4 questions, 2 rows each; lengths 10, 20, 20, 40 -> quartile edges 10, 17.5, 20, 25, inf
    L = np.repeat([10.0, 20.0, 20.0, 40.0], 2)
    q = np.repeat(["a", "b", "c", "d"], 2)
    s = length_strata(L, q, 4)
    np.testing.assert_array_equal(s.stratum, [0, 0, 1, 1, 1, 1, 2, 2])
    np.testing.assert_array_equal(s.lower, [10.0, 20.0, 25.0])  # [17.5, 20) held nothing
    np.testing.assert_array_equal(s.upper, [17.5, 25.0, np.inf])
    np.testing.assert_array_equal(s.median, [10.0, 20.0, 40.0])
    one = length_strata(L, q, 1)
    assert set(one.stratum.tolist()) == {0} and one.lower[0] == 10.0
    with pytest.raises(InputError, match="finite"):
        length_strata([1.0, np.nan], ["a", "b"], 2)
    with pytest.raises(InputError, match="n_strata"):
        length_strata(L, q, 0)
