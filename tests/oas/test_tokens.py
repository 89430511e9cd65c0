"""Tokens beside accuracy (oas/_tokens.py): context tokens packed under the budget (MODEL §2),
generated tokens from ``meta_tokens_*``, the gain per 1,000 tokens with a per-conversation t
interval; ``retcon evaluate --json`` carries the table."""

import json

import numpy as np
import pytest
from scipy import stats

import oas
from retcon.vocab import ACTIONS
from tests._cli import run_cli

RAW = [300.0, 200.0]  # the raw cluster's two records
GEN = {"merge": 120.0, "abstract": 60.0, "rewrite": 150.0}


def rows(groups=4, per=3, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for g in range(groups):
        for q in range(per):
            for b in (100, 1000):
                feats = dict.fromkeys(oas.FEATURE_NAMES, 0.0)
                feats.update({"budget_over_512": b / 512, "query_type_0": 1.0})
                lengths = {"ret": RAW, "merge": [GEN["merge"]], "abstract": [GEN["abstract"]],
                           "rewrite": [90.0, 60.0]}  # fmt: skip
                out.append(
                    {
                        "instance_id": f"g{g}q{q}@{b}",
                        "query_id": f"g{g}q{q}",
                        "group_id": f"g{g}",
                        "query_type": "single-hop",
                        "budget": b,
                        **{f"y_{a}": float(rng.random() < 0.5) for a in ACTIONS},
                        **feats,
                        "evidence_structure": {
                            "packing": "cut",
                            "lengths": lengths,
                            "evidence": {a: [1] * len(v) for a, v in lengths.items()},
                        },
                        **{f"meta_tokens_{a}": v for a, v in GEN.items()},
                    }
                )
    return out


def test_context_and_generated_tokens_by_hand():
    data = oas.paired_from_rows(rows())
    ctx = oas.context_tokens(data)
    for i, b in enumerate(data.budget):
        # cut packing keeps min(B, total) tokens (MODEL §2)
        expect = [min(b, 500.0), min(b, 120.0), min(b, 60.0), min(b, 150.0)]
        assert ctx[i] == pytest.approx(expect)
    gen = oas.generated_tokens(data)
    assert (gen[:, 0] == 0).all() and (gen[:, 1:] == [120.0, 60.0, 150.0]).all()


def test_gain_per_1k_tokens_is_a_per_conversation_ratio_with_a_t_interval():
    rs = rows(groups=5, per=4, seed=3)
    table = {(r.action, r.budget): r for r in oas.token_table(oas.paired_from_rows(rs))}
    for b in (100.0, 1000.0):
        for a in ("merge", "abstract"):
            per = []
            for g in range(5):
                sel = [r for r in rs if r["group_id"] == f"g{g}" and r["budget"] == b]
                gain = np.mean([r[f"y_{a}"] - r["y_ret"] for r in sel])
                per.append(1000 * gain / min(b, GEN[a]))
            per = np.array(per)
            half = stats.t.ppf(0.975, 4) * per.std(ddof=1) / np.sqrt(5)
            row = table[(a, b)]
            assert row.gain_per_1k_context == pytest.approx(per.mean())
            assert row.gain_per_1k_context_ci == pytest.approx(
                (per.mean() - half, per.mean() + half)
            )
            assert row.context_tokens == pytest.approx(min(b, GEN[a]))
            assert row.generated_tokens == GEN[a] and row.groups == 5
    assert np.isnan(table[("ret", 100.0)].gain_per_1k_context)


def test_rows_without_structure_have_unknown_tokens():
    rs = rows(groups=2, per=1)
    for r in rs:
        del r["evidence_structure"]
        for a in GEN:
            del r[f"meta_tokens_{a}"]
    t = oas.token_table(oas.paired_from_rows(rs))
    assert all(np.isnan(r.context_tokens) for r in t)
    assert all(np.isnan(r.generated_tokens) for r in t if r.action != "ret")


@pytest.mark.slow  # evaluate fits and compiles (tens of seconds on 2 cores)
def test_evaluate_json_carries_tokens(tmp_path, capsys):
    f = tmp_path / "p.jsonl"
    oas.write_paired(f, rows(groups=10, per=3))
    rc, out, err = run_cli(["evaluate", "--data", str(f), "--json", "--resamples", "20"], capsys)
    assert rc == 0, err
    tokens = json.loads(out)["tokens"]
    assert {(t["action"], t["budget"]) for t in tokens} == {
        (a, b) for a in ACTIONS for b in (100.0, 1000.0)
    }
    merge = next(t for t in tokens if t["action"] == "merge" and t["budget"] == 1000.0)
    assert merge["context_tokens"] == 120.0 and merge["generated_tokens"] == 120.0
    assert len(merge["gain_per_1k_context_ci"]) == 2
