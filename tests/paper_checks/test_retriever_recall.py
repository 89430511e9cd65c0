"""``experiments.retriever_recall``: recall at k of the end-to-end retrievers (docs/end-to-end.md)."""

import json
from pathlib import Path

import numpy as np

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def test_recall_at_k_is_monotone_and_complete_with_every_unit(tmp_path, capsys):
    # Recall at k counts the gold evidence turns inside the top k units: it never falls as k
    # grows, and with k at least the number of units it is 1 for every question whose evidence
    # names existing turns (by hand: the tiny conversation has 2 sessions and 12 turns).
    from experiments.retriever_recall import main

    out = tmp_path / "r"
    argv = ["--out", str(out), "--data", str(FIX / "locomo_tiny.json")]
    argv += ["--retrievers", "bm25,hashed-tfidf,hashed-tfidf@max-turn"]
    argv += ["--session-k", "1,2", "--turn-k", "1,12"]
    assert main(argv) == 0
    res = json.loads((out / "retriever_recall.json").read_text())["data"]
    for gran in ("session", "turn"):
        for name in ("bm25", "hashed-tfidf"):
            m = np.asarray(res[gran][name]["mean"])
            assert m[0] <= m[1] == 1.0
    m = np.asarray(res["session"]["hashed-tfidf@max-turn"]["mean"])  # sessions by best turn
    assert m[0] <= m[1] == 1.0
    assert "hashed-tfidf@max-turn" not in res["turn"]
    assert "minus_bm25" in res["session"]["hashed-tfidf"]
    assert "| bm25 |" in capsys.readouterr().out
