"""The real LoCoMo file (../shared/data/locomo, via RETCON_DATA_DIR): loading and the §6 sign reversal."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from oas.real import load_locomo
from retcon.errors import InputError
from retcon.vocab import LOCOMO_CATEGORY
from tests._data import LOCOMO_PATH as PATH
from tests._data import needs_locomo

pytestmark = needs_locomo


@pytest.fixture(scope="module")
def raw():
    return json.loads(PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def loaded():
    return load_locomo(PATH)


def test_counts_agree_with_an_independent_pass_over_the_json(raw, loaded):
    """MODEL §9: categories 1-4 kept (category map of the benchmark's code), 5 excluded and counted."""
    cats = Counter(q["category"] for c in raw for q in c["qa"])
    rep = loaded.report
    assert rep.n_excluded == cats[5]
    assert rep.n_queries + rep.n_no_evidence == sum(cats[k] for k in (1, 2, 3, 4))
    kept = Counter(q.source_type for c in loaded.conversations for q in c.queries)
    assert sum(kept.values()) == rep.n_queries
    for k in (1, 2, 3, 4):
        assert cats[k] - rep.n_no_evidence <= kept[str(k)] <= cats[k]
    assert {q.query_type for c in loaded.conversations for q in c.queries} == set(
        LOCOMO_CATEGORY.values()
    )


def test_every_kept_evidence_id_names_a_turn(raw, loaded):
    turns = {
        c["sample_id"]: {
            t["dia_id"]
            for k, v in c["conversation"].items()
            if re.fullmatch(r"session_\d+", k)
            for t in v
        }
        for c in raw
    }
    for conv in loaded.conversations:
        for q in conv.queries:
            assert q.evidence_ids and set(q.evidence_ids) <= turns[conv.conversation_id], q.query_id
    # sessions keep their dates and the dataset's generations
    s = loaded.conversations[0].sessions[0]
    assert s.date and s.summary and s.observations


def test_strict_mode_names_the_first_loose_evidence_id(loaded):
    assert loaded.report.n_evidence_repaired > 0 and loaded.report.n_evidence_dropped > 0
    with pytest.raises(
        InputError, match=r"locomo10.json: conversation 0 \(conv-26\) qa \d+: field 'evidence'"
    ):
        load_locomo(PATH, strict=True)


@pytest.mark.slow
def test_full_locomo_dataset_lexical_shows_the_sign_reversal(tmp_path):
    """MODEL §6 (Prop. 2): consolidation ahead of retention at tight budgets, behind at loose ones.

    Full LoCoMo (categories 1-4), dataset operators, lexical reader, default protocol. The claim is
    about merge (LoCoMo's observations): dU > 0 at the tightest budget, < 0 at the loosest, with the
    grouped bootstrap interval excluding 0 at both ends.
    """
    from oas.real import PairJob, run_pair_job

    s = run_pair_job(PairJob(dataset="locomo", out=str(tmp_path / "p.jsonl")), progress=False)
    assert s["n_queries"] == load_locomo(PATH).report.n_queries
    for op in ("merge", "rewrite"):
        c = s["crossover"][op]
        assert c["sign_reversal"] and c["ahead_at_tightest"], (op, s["delta"][op])
        lo_tight, _ = s["delta_ci"][op][0]
        _, hi_loose = s["delta_ci"][op][-1]
        assert lo_tight > 0 and hi_loose < 0
        assert s["budgets"][0] < c["crossover_budget"] < s["budgets"][-1]
