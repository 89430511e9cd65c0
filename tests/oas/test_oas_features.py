"""The 11 OAS features (MODEL §8) against Python-loop references, and packing invariants (§2, §6.7)."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import theory
from oas import FEATURE_NAMES, budget_fit_fraction, compute_features, compute_features_batch
from retcon.errors import InputError


def fit_loop(budget, lengths, packing):
    """MODEL §2 packing by the one reference, as a share of the cluster's tokens."""
    return float(np.sum(theory.pack_reference(lengths, budget, packing)) / sum(lengths))


clusters = st.lists(st.integers(1, 400), min_size=1, max_size=7)
budgets = st.floats(1.0, 2000.0, allow_nan=False)


@given(clusters, budgets, st.sampled_from(["prefix", "skip", "cut"]))
def test_budget_fit_matches_loop(lengths, budget, packing):
    """MODEL §2: f_B is the share of C's tokens theory.pack_reference keeps, for each packing."""
    got = budget_fit_fraction(np.array([budget]), np.array([lengths], float), packing=packing)[0]
    assert got == pytest.approx(fit_loop(budget, lengths, packing), abs=1e-12)


@given(clusters, budgets, budgets)
def test_prefix_fit_is_monotone_in_budget(lengths, b1, b2):
    """MODEL §6.7: under prefix packing the fitted set is nested in B, so f_B is non-decreasing;
    cut packing fits at least as much as prefix, and skip at least as much as prefix."""
    lo, hi = sorted([b1, b2])
    L = np.array([lengths], float)
    f = {
        p: budget_fit_fraction(np.array([lo, hi]), np.repeat(L, 2, 0), packing=p)
        for p in ("prefix", "skip", "cut")
    }
    assert f["prefix"][0] <= f["prefix"][1] + 1e-12
    assert np.all(f["cut"] >= f["prefix"] - 1e-12) and np.all(f["skip"] >= f["prefix"] - 1e-12)
    assert np.all((f["prefix"] >= 0) & (f["prefix"] <= 1))


@st.composite
def instances(draw):
    k = draw(st.integers(1, 6))
    lengths = draw(st.lists(st.integers(1, 300), min_size=k, max_size=k))
    sessions = draw(st.lists(st.sampled_from(["s1", "s2", "s3", "s4"]), min_size=k, max_size=k))
    emb = draw(
        st.lists(
            st.lists(
                st.floats(-3, 3, allow_nan=False).filter(lambda x: abs(x) > 1e-3),
                min_size=3,
                max_size=3,
            ),
            min_size=k,
            max_size=k,
        )
    )
    return draw(budgets), lengths, sessions, np.array(emb), draw(st.integers(0, 3))


def cos(u, v):
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def cheapest_whole_share(budget, lengths):
    """The paper's f_B as a loop: records by increasing length (ties in the given order), each that
    still fits taken whole; the share of the records taken."""
    left, taken = budget, 0
    for i in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
        if lengths[i] <= left:
            left -= lengths[i]
            taken += 1
    return taken / len(lengths)


@given(instances())
def test_features_match_definitions(inst):
    """MODEL §8 features 1-11, each against its definition written as a loop; the default is the
    paper's features 3 and 6, ``definitions="ours"`` the package's older ones."""
    budget, lengths, sessions, emb, slot = inst
    f = compute_features(budget, lengths, sessions, emb, slot)
    ours = compute_features(budget, lengths, sessions, emb, slot, definitions="ours")
    assert f.shape == ours.shape == (len(FEATURE_NAMES),)
    assert f[0] == pytest.approx(budget / 512)
    assert f[1] == pytest.approx(sum(lengths) / budget)
    assert f[2] == pytest.approx(cheapest_whole_share(budget, lengths))
    assert ours[2] == pytest.approx(fit_loop(budget, lengths, "prefix"))
    assert f[3] == len(lengths)
    assert f[4] == len(set(sessions))
    units = [e / np.linalg.norm(e) for e in emb]
    centroid = np.mean(units, axis=0)
    spread = np.mean([float(np.sum((u - centroid) ** 2)) for u in units])
    assert f[5] == pytest.approx(spread, abs=1e-9)
    if np.linalg.norm(centroid) > 1e-6:
        assert ours[5] == pytest.approx(np.mean([1 - cos(e, centroid) for e in emb]), abs=1e-9)
    pairs = [cos(a, b) for a, b in itertools.combinations(emb, 2)]
    assert f[6] == pytest.approx(np.mean(pairs) if pairs else 1.0, abs=1e-9)
    assert f[7:].tolist() == np.eye(4)[slot].tolist()
    assert np.delete(f, [2, 5]).tolist() == np.delete(ours, [2, 5]).tolist()


def test_batch_equals_single_with_padding():
    """Padding slots (mask False) change nothing: the batched features equal the one-instance ones."""
    rng = np.random.default_rng(0)
    lengths = np.array([[30, 80, 0, 0], [10, 20, 30, 40]], float)
    mask = lengths > 0
    sessions = np.array([[1, 2, 9, 9], [3, 3, 4, 4]])
    emb = rng.normal(size=(2, 4, 5))
    batch = compute_features_batch([100.0, 55.0], lengths, mask, sessions, emb, [1, 3])
    for i in range(2):
        k = mask[i].sum()
        single = compute_features(
            [100.0, 55.0][i], lengths[i, :k], sessions[i, :k], emb[i, :k], [1, 3][i]
        )
        np.testing.assert_allclose(batch[i], single, atol=1e-12)


def test_single_record_pairwise_is_one():
    f = compute_features(64.0, [100], ["s"], [[0.3, -1.0]], 0)
    assert f[6] == 1.0 and f[5] == pytest.approx(0.0) and f[2] == 0.0


def test_bad_feature_inputs_raise():
    with pytest.raises(InputError, match="packing"):
        budget_fit_fraction([1.0], [[1.0]], packing="greedy")
    with pytest.raises(InputError, match="session_ids"):
        compute_features(10.0, [1, 2], ["a"], [[1.0], [1.0]], 0)
    with pytest.raises(InputError, match="query_type_slot"):
        compute_features(10.0, [1], ["a"], [[1.0]], 4)


@given(
    seed=st.integers(0, 2**31 - 1),
    k=st.integers(1, 7),
    packing=st.sampled_from(["prefix", "skip", "cut"]),
    definitions=st.sampled_from(["paper", "ours"]),
)
def test_compute_features_at_several_budgets_is_each_budget_alone_bit_for_bit(
    seed, k, packing, definitions
):
    """MODEL §8: the budget-independent features computed once give every budget's row exactly
    as ``compute_features`` at that budget alone."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 900, k)
    sessions = rng.choice(["s1", "s2", "s3"], k)
    emb = rng.normal(size=(k, 5))
    budgets = (32, 45, 91, 256, 431, 1024, 2048)
    got = compute_features(
        np.asarray(budgets), lengths, sessions, emb, 2, packing=packing, definitions=definitions
    )
    for i, b in enumerate(budgets):
        want = compute_features(
            b, lengths, sessions, emb, 2, packing=packing, definitions=definitions
        )
        assert got[i].tobytes() == want.tobytes(), (b, got[i], want)
