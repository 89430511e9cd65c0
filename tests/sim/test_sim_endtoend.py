"""End-to-end knobs as scenario parameters: retriever recall and the query-type classifier.

Each property states the MODEL section it checks (docs/simulation.md, "Retriever recall and the
query-type classifier"). The tests that compile the kernel with misses (a new static structure,
seconds of compilation) are in the slow tier; the fast tier checks the configs, that recall 1 is
the kernel of today, the classifier's draws and the paired data's predicted type.
"""

import dataclasses

import jax
import numpy as np
import pytest

import sim
from retcon.errors import InputError
from sim._instances import predict_types
from tests._sim_helpers import frontier_equals_per_budget, two_type

N = 4096  # queries: the query count (and so the compiled shape) of tests/sim/test_sim_kernel.py
RECALL = 0.6


def _with(s, *, recall=None, classifier=None):
    kw = {}
    if recall is not None:
        kw["retriever"] = dataclasses.replace(s.retriever, recall=recall)
    if classifier is not None:
        kw["classifier"] = classifier
    return dataclasses.replace(s, **kw)


# ------------------------------------------------------------------------------------------------
# configs


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, "0.9", True, float("nan")])
def test_recall_out_of_range_names_the_key(bad):
    with pytest.raises(InputError, match=r"retriever\.recall"):
        sim.RetrieverConfig(recall=bad)
    d = sim.load_scenario("single-cluster").to_dict()
    d["retriever"]["recall"] = bad
    with pytest.raises(InputError, match=r"retriever\.recall"):
        sim.scenario_from_dict(d)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"accuracy": 1.2}, r"classifier\.accuracy must be in \[0, 1\]; got 1.2"),
        ({"confusion": ((1.0, 0.0),) * 4}, r"classifier\.confusion\[0\] must be an array of 4"),
        ({"confusion": ((1.0, 0, 0, 0),) * 3}, r"classifier\.confusion must be a 4 x 4 array"),
        (
            {"confusion": ((0.5, 0.2, 0.2, 0.2),) + ((1.0, 0, 0, 0),) * 3},
            r"classifier\.confusion\[0\] must sum to 1",
        ),
        (
            {"confusion": ((1.0, 0, 0, 0), (1.5, -0.5, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1))},
            r"classifier\.confusion\[1\]\[0\] must be in \[0, 1\]",
        ),
        (
            {"accuracy": 0.5, "confusion": tuple(tuple(r) for r in np.eye(4))},
            r"classifier\.accuracy and classifier\.confusion are exclusive",
        ),
    ],
)
def test_classifier_validation_names_the_parameter(kw, match):
    with pytest.raises(InputError, match=match):
        sim.ClassifierConfig(**kw)


def test_new_keys_roundtrip_through_toml_layout():
    base = sim.load_scenario("locomo-like")
    assert base.retriever.recall == 1.0 and base.classifier.perfect
    d = base.to_dict()
    d["retriever"]["recall"] = 0.8
    d["classifier"] = {
        "confusion": [[0.7, 0.1, 0.1, 0.1], [0.5, 0.5, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    }
    s = sim.scenario_from_dict(d)
    assert s.retriever.recall == 0.8 and not s.classifier.perfect
    assert sim.scenario_from_dict(s.to_dict()) == s
    d["classifier"] = {"accuracy": 0.7}
    m = sim.scenario_from_dict(d).classifier.matrix()
    np.testing.assert_allclose(m, np.where(np.eye(4, dtype=bool), 0.7, 0.1))
    d["classifier"] = {"recall": 0.7}
    with pytest.raises(InputError, match=r"unknown key 'classifier\.recall'"):
        sim.scenario_from_dict(d)


def test_recall_one_is_the_kernel_of_today():
    """With recall 1 the kernel's structure is the one without the knob (the same compiled code,
    no extra draw), so every existing stream and result is unchanged bit for bit."""
    s = two_type()
    st0, pr0 = sim.kernel.split(s)
    st1, pr1 = sim.kernel.split(_with(s, recall=1.0))
    assert st0 == st1 and not st0.misses
    for a, b in zip(pr0, pr1):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert sim.kernel.split(_with(s, recall=0.99))[0].misses


def test_numpy_bench_kernel_and_stress_refuse_recall_below_one():
    from tests._references.sim_numpy import params_of

    s = _with(sim.load_scenario("locomo-like"), recall=0.9)
    with pytest.raises(InputError, match=r"retriever\.recall must be 1"):
        params_of(s)
    with pytest.raises(InputError, match=r"retriever\.recall must be 1"):
        sim.stress(jax.random.key(0), s, n_memories=8)


# ------------------------------------------------------------------------------------------------
# the kernel with misses


@pytest.fixture(scope="module")
def common_draws():
    """The same key under recall 1, RECALL and a lower recall: the same queries, nested misses."""
    s = two_type()
    key = jax.random.key(3)
    full = sim.simulate_queries(key, s, N)
    part = sim.simulate_queries(key, _with(s, recall=RECALL), N)
    low = sim.simulate_queries(key, _with(s, recall=0.3), N)
    return s, full, part, low


@pytest.mark.slow
def test_recall_never_raises_a_querys_success(common_draws):
    """MODEL §2 reader: an absent evidence unit has support 0, and the support is a product, so
    with common draws a miss can only lower a query's success, under every action and budget;
    a lower recall (a superset of misses) lowers it further."""
    _, full, part, low = common_draws
    np.testing.assert_array_equal(full.query_type, part.query_type)
    np.testing.assert_array_equal(full.record_lengths, part.record_lengths)
    assert np.all(part.success_prob <= full.success_prob)
    assert np.all(low.success_prob <= part.success_prob)
    assert np.any(part.success_prob < full.success_prob)


@pytest.mark.slow
def test_a_miss_leaves_the_guess_and_no_raw_grounding(common_draws):
    """MODEL §2-§4: a query with a missed record scores g under every action at every budget, is
    outside G_B (its evidence is not in the context), and its dU is zero, so dU = C + R still holds
    per query. The share of such queries is about sum_t w_t (1 - recall**|C_t|)."""
    s, full, part, _ = common_draws
    changed = np.any(part.success_prob != full.success_prob, axis=(1, 2))
    g = np.float32(np.round(np.float32(s.acc_guess) * 2**24) / 2**24)
    missed = np.all(part.success_prob == g, axis=(1, 2))
    assert np.all(missed[changed])
    assert not np.any(part.raw_grounded[missed])
    assert np.all(part.delta[missed] == 0)
    np.testing.assert_array_equal(part.coverage + part.replacement, part.delta)
    # two_type: half single-hop (1 record), half multi-hop (3 records)
    expected = 0.5 * (1 - RECALL) + 0.5 * (1 - RECALL**3)
    assert abs(missed.mean() - expected) < 0.03


@pytest.mark.slow
@pytest.mark.parametrize("packing", ["prefix", "cut"])
def test_frontier_equals_per_budget_with_misses(packing):
    """MODEL §2-§4 with misses: the frontier path and the per-budget packing give the same m, G_B,
    H_B and block sums bit for bit."""
    frontier_equals_per_budget(two_type(packing=packing, recall=RECALL))


# ------------------------------------------------------------------------------------------------
# what the router sees


@pytest.fixture(scope="module")
def instances():
    """Instances of N queries (the compiled shape of ``common_draws``) under recall 1 and RECALL,
    with a 0.55-accurate classifier in the second."""
    s = two_type()
    n = N * len(s.budgets) - 5
    full = sim.simulate_instances(jax.random.key(0), s, n)
    part = sim.simulate_instances(
        jax.random.key(0),
        _with(s, recall=RECALL, classifier=sim.ClassifierConfig(accuracy=0.55)),
        n,
    )
    return full, part


@pytest.mark.slow
def test_missed_records_are_absent_from_what_the_router_sees(instances):
    """MODEL §8: features come from the retrieved cluster. A missed record is not in
    ``record_mask``, has no length, session or embedding, and the features (token pressure,
    constituent count) are those of the found records only."""
    import oas

    full, part = instances
    np.testing.assert_array_equal(full.record_mask, full.evidence_mask)
    np.testing.assert_array_equal(part.evidence_mask, full.record_mask)
    missed = part.evidence_mask & ~part.record_mask
    assert missed.any() and not np.any(part.record_mask & ~part.evidence_mask)
    assert np.all(part.record_lengths[missed] == 0) and np.all(part.session_ids[missed] == -1)
    assert np.all(part.embeddings[missed] == 0)
    found = part.record_mask
    np.testing.assert_array_equal(part.record_lengths[found], full.record_lengths[found])
    x = oas.compute_features_batch(
        part.budget,
        part.record_lengths,
        part.record_mask,
        part.session_ids,
        part.embeddings,
        part.predicted_type,
    )
    np.testing.assert_array_equal(x[:, 3], found.sum(1))
    np.testing.assert_allclose(x[:, 1], part.record_lengths.sum(1) / part.budget)
    # the candidates of every action hold no missed record's tokens
    tokens = part.context_lengths[:, 0].sum(1)
    assert np.all(tokens <= full.context_lengths[:, 0].sum(1) + 1e-3)


@pytest.mark.slow
def test_paired_data_read_the_predicted_type(instances):
    """MODEL §8 features 8-11 are the predicted type's one-hot; the gold type is kept in
    ``meta_gold_type`` and the success probabilities are the gold type's reader's."""
    from oas._simulate import paired_from_instances
    from retcon.vocab import LOCOMO_TYPES

    full, part = instances
    d = paired_from_instances(jax.random.key(1), part)
    np.testing.assert_array_equal(np.argmax(d.features[:, 7:11], 1), part.predicted_type)
    assert list(d.query_type) == [LOCOMO_TYPES[t] for t in part.predicted_type]
    assert list(d.meta["meta_gold_type"]) == [LOCOMO_TYPES[t] for t in part.query_type]
    np.testing.assert_array_equal(part.query_type, full.query_type)
    wrong = part.predicted_type != part.query_type
    assert 0.35 < wrong.mean() < 0.55  # 1 - 0.55, per query
    np.testing.assert_array_equal(full.predicted_type, full.query_type)


def test_predicted_types_follow_the_confusion_matrix():
    """MODEL §8/§9: the predicted type of a question of gold type t is drawn from row t of the
    confusion matrix (a loose check with a fixed key); a lower diagonal mistypes a superset."""
    P = np.asarray(
        [
            [0.7, 0.2, 0.1, 0.0],
            [0.5, 0.4, 0.05, 0.05],
            [0.1, 0.0, 0.9, 0.0],
            [0.25, 0.25, 0.25, 0.25],
        ]
    )
    gold = np.repeat(np.arange(4), 2500)
    pred = predict_types(jax.random.key(7), gold, P)
    emp = np.stack([np.bincount(pred[gold == t], minlength=4) / 2500 for t in range(4)])
    np.testing.assert_allclose(emp, P, atol=0.03)
    assert np.all(emp[P == 0] == 0)
    hi = predict_types(jax.random.key(7), gold, np.where(np.eye(4, dtype=bool), 0.8, 0.2 / 3))
    lo = predict_types(jax.random.key(7), gold, np.where(np.eye(4, dtype=bool), 0.5, 0.5 / 3))
    assert np.all((lo != gold)[hi != gold])


@pytest.mark.slow
def test_end_to_end_sim_experiment_tiny(tmp_path):
    """The sweep runs at tiny size: a figure, a sidecar with every cell, CIs around each point,
    and the expected share of queries with their whole evidence (sum_t w_t r**|C_t|)."""
    import json

    from experiments import end_to_end_sim

    out = tmp_path / "out"
    argv = ["--out", str(out), "--recalls", "1,0.5", "--accuracies", "1,0.4"]
    argv += ["--instances", "480", "--budgets", "3", "--resamples", "50", "--groups", "4"]
    assert end_to_end_sim.main(argv) == 0
    side = json.loads((out / "end_to_end_sim.json").read_text())
    assert (out / "end_to_end_sim.png").stat().st_size > 0
    cells = side["data"]["cells"]
    assert len(cells) == 2 and all(len(r) == 2 for r in cells)
    for row in cells:
        for c in row:
            for g in c["gain"].values():
                assert g["lower"] <= g["point"] <= g["upper"]
    w = {"single-hop": 0.4, "multi-hop": 0.25, "temporal": 0.2, "open-domain": 0.15}
    k = {"single-hop": 1, "multi-hop": 3, "temporal": 2, "open-domain": 2}
    expected = sum(w[t] * 0.5 ** k[t] for t in w)
    assert cells[1][0]["intact_share"] == pytest.approx(expected)
    assert cells[0][0]["type_accuracy"] == 1.0 and cells[0][1]["type_accuracy"] < 0.6


def test_paired_data_features_read_the_predicted_type():
    """MODEL §8 features 8-11 are the one-hot of the type the router sees (the predicted one); the
    gold type goes to ``meta_gold_type``; without ``predicted_type`` nothing changes."""
    from oas._simulate import paired_from_instances
    from retcon.vocab import LOCOMO_TYPES

    n = 8
    rng = np.random.default_rng(0)
    mask = np.asarray([[True, i % 2 == 0] for i in range(n)])
    emb = rng.normal(size=(n, 2, 4)) * mask[..., None]
    inst = sim.Instances(
        budget=np.full(n, 64.0),
        query_type=np.arange(n) % 4,
        group=np.arange(n) // 4,
        query_id=np.arange(n),
        record_lengths=np.where(mask, 30.0, 0.0),
        record_mask=mask,
        session_ids=np.where(mask, 0, -1),
        embeddings=emb,
        success_prob=rng.uniform(size=(n, 4)),
    )
    pred = (inst.query_type + 1) % 4
    d0 = paired_from_instances(jax.random.key(5), inst)
    d = paired_from_instances(jax.random.key(5), inst._replace(predicted_type=pred))
    np.testing.assert_array_equal(np.argmax(d.features[:, 7:11], 1), pred)
    np.testing.assert_array_equal(d.features[:, :7], d0.features[:, :7])
    np.testing.assert_array_equal(d.outcomes, d0.outcomes)
    assert list(d.query_type) == [LOCOMO_TYPES[t] for t in pred]
    assert list(d.meta["meta_gold_type"]) == list(d0.query_type)
    assert "meta_gold_type" not in d0.meta
