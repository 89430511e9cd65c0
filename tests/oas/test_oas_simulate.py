"""Simulated paired data (MODEL §8): four outcomes from one draw, features from the shared code,
same key -> same data; and the public API of `oas`."""

import jax
import numpy as np
import pytest

import oas
from oas._simulate import paired_from_instances
from tests._toy import toy_instances


def test_public_names_import():
    for name in oas.__all__:
        assert getattr(oas, name) is not None, name


@pytest.fixture(scope="module")
def inst():
    return toy_instances(jax.random.key(0), 30, 8, [64, 128, 256, 512])


def test_outcomes_follow_success_prob_and_pairing(inst):
    """Shared coupling: y_a = 1{u < p_a} with one u per instance, so p_a >= p_b implies y_a >= y_b
    (pairing); each column's mean tracks its probability; the same key gives the same data."""
    d = paired_from_instances(jax.random.key(5), inst)
    p = inst.success_prob
    for a in range(4):
        for b in range(4):
            assert np.all(d.outcomes[p[:, a] >= p[:, b], a] >= d.outcomes[p[:, a] >= p[:, b], b])
    se = np.sqrt(0.25 / d.n)
    assert np.all(np.abs(d.outcomes.mean(0) - p.mean(0)) < 5 * se)
    again = paired_from_instances(jax.random.key(5), inst)
    np.testing.assert_array_equal(again.outcomes, d.outcomes)
    ind = paired_from_instances(jax.random.key(5), inst, coupling="independent")
    assert np.all(np.abs(ind.outcomes.mean(0) - p.mean(0)) < 5 * se)


def test_features_are_the_shared_code(inst):
    d = paired_from_instances(jax.random.key(5), inst)
    ref = oas.compute_features_batch(
        inst.budget,
        inst.record_lengths,
        inst.record_mask,
        inst.session_ids,
        inst.embeddings,
        inst.query_type,
    )
    np.testing.assert_array_equal(d.features, ref)
    assert len(set(d.instance_id)) == d.n and d.vocabulary == "locomo"


@pytest.mark.slow
def test_simulate_paired_with_sim():
    """End to end with sim.simulate_instances: valid paired data that round-trips through JSONL."""
    import tempfile

    from oas._simulate import simulate_paired

    d = simulate_paired(jax.random.key(0), "locomo-like", 400, [32, 128, 512])
    assert d.n == 400 and set(np.unique(d.budget)) == {32.0, 128.0, 512.0}
    np.testing.assert_array_equal(
        simulate_paired(jax.random.key(0), "locomo-like", 400, [32, 128, 512]).outcomes, d.outcomes
    )
    with tempfile.TemporaryDirectory() as tmp:
        back = oas.read_paired(oas.write_paired(f"{tmp}/p.jsonl", d))
    np.testing.assert_array_equal(back.features, d.features)


def test_write_paired_chunks_writes_the_whole_tables_bytes(inst, tmp_path):
    """write_paired_chunks of consecutive row slices (an uneven last one) is write_paired of the
    whole, byte for byte (docs/paired-data.md: one row per instance, in order)."""
    d = paired_from_instances(jax.random.key(5), inst)
    cuts = list(range(0, d.n, 7)) + [d.n]
    parts = [d.take((np.arange(d.n) >= a) & (np.arange(d.n) < b)) for a, b in zip(cuts, cuts[1:])]
    oas.write_paired(tmp_path / "whole.jsonl", d)
    oas.write_paired_chunks(tmp_path / "parts.jsonl", iter(parts))
    assert (tmp_path / "parts.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


def test_chunks_slice_instances_with_unrecorded_fields(inst, monkeypatch):
    """Instances leave optional fields unrecorded (``None``, sim.Instances); simulate_paired_chunks
    slices the recorded ones only, and its chunks are simulate_paired's rows in order (MODEL §8:
    each row is a function of its own instance and uniform)."""
    import types

    import sim

    assert any(v is None for v in inst), "the toy instances must leave a field unrecorded"
    scenario = types.SimpleNamespace(name="toy", vocabulary="locomo", packing="prefix")
    monkeypatch.setattr(sim, "simulate_instances", lambda key, config, n, budgets=None: inst)
    key = jax.random.key(4)
    whole = oas.simulate_paired(key, scenario, inst.budget.shape[0])
    chunks = list(oas.simulate_paired_chunks(key, scenario, inst.budget.shape[0], rows=7))
    assert [c.n for c in chunks[:-1]] == [7] * (len(chunks) - 1) and 0 < chunks[-1].n <= 7
    np.testing.assert_array_equal(np.concatenate([c.outcomes for c in chunks]), whole.outcomes)
    assert [i for c in chunks for i in c.instance_id] == list(whole.instance_id)


@pytest.mark.slow  # compiles the sim kernel for its own shape
def test_chunks_concatenate_to_the_whole_draw(tmp_path):
    """simulate_paired_chunks builds the draw's rows a slice at a time (MODEL §8: each row is a
    function of its own instance and uniform): the chunks' rows, written by write_paired_chunks,
    are write_paired's bytes for the whole draw, including an uneven last chunk."""
    key, budgets = jax.random.key(3), [32, 128, 512]
    whole = oas.simulate_paired(key, "locomo-like", 47, budgets)
    chunks = list(oas.simulate_paired_chunks(key, "locomo-like", 47, budgets, rows=10))
    assert [c.n for c in chunks] == [10, 10, 10, 10, 7]
    np.testing.assert_array_equal(np.concatenate([c.outcomes for c in chunks]), whole.outcomes)
    np.testing.assert_array_equal(np.concatenate([c.features for c in chunks]), whole.features)
    assert [i for c in chunks for i in c.instance_id] == list(whole.instance_id)
    oas.write_paired(tmp_path / "whole.jsonl", whole)
    oas.write_paired_chunks(tmp_path / "chunks.jsonl", iter(chunks))
    assert (tmp_path / "chunks.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
