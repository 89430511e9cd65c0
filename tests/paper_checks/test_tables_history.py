"""Tables 6 and 12 (MODEL §11, full-history stress test; §8 policies): the cells against references
written here, every cell present from a full-history paired file of real LoCoMo and of the
generated LongMemEval fixture, and "6"/"12" kept in ``not_made`` for rows of the controlled
design."""

import contextlib
import io
import json
from pathlib import Path

import jax
import numpy as np
import pytest

from oas import FEATURE_NAMES, paired_from_rows
from paper_checks._published import TABLE_6, TABLE_12_MACRO, TABLE_12_ROWS
from paper_checks.tables._tables_5_6_12 import (
    is_full_history,
    per_budget_fixed,
    table_6,
    table_12,
)
from tests._data import LOCOMO_PATH, needs_locomo

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _rows(n_q: int = 12, budgets=(32, 64, 128, 256), tag: str | None = "full-history"):
    rng = np.random.default_rng(3)
    rows = []
    for q in range(n_q):
        for b in budgets:
            y = rng.integers(0, 2, 4).astype(float)
            row = {
                "instance_id": f"q{q}@{b}",
                "query_id": f"q{q}",
                "group_id": f"c{q % 4}",
                "query_type": "multi-session",
                "budget": b,
                **{f"y_{a}": float(v) for a, v in zip(("ret", "merge", "abstract", "rewrite"), y)},
                **{f: float(rng.random()) for f in FEATURE_NAMES[:7]},
                **{f"query_type_{k}": float(k == 1) for k in range(4)},
            }
            if tag is not None:
                row["meta_candidates"] = tag
            rows.append(row)
    return rows


def _main(argv: list[str]) -> tuple[int, str, str]:
    from retcon.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([*argv, "--no-progress"] if argv[0] == "pair" else argv)
    return rc, out.getvalue(), err.getvalue()


def test_table_6_cells_match_a_reference():
    """Retention, abstract, gain with its h/h, binary oracle = max(ret, abstract), per budget."""
    paired = paired_from_rows(_rows())
    assert is_full_history(paired)
    cells = table_6(jax.random.key(0), paired, n_resamples=50)
    assert [c["row"] for c in cells[::4]] == ["retention", "abstract", "gain", "binary oracle"]
    y, b = np.asarray(paired.outcomes), np.asarray(paired.budget)
    for c in cells:
        at = b == c["budget"]
        ret, ab = y[at, 0], y[at, 2]
        want = {
            "retention": ret,
            "abstract": ab,
            "gain": ab - ret,
            "binary oracle": np.maximum(ret, ab),
        }
        assert c["ours"] == pytest.approx(want[c["row"]].mean(), abs=1e-6)
        pub = TABLE_6[c["budget"]]
        assert c["paper"] == {"retention": pub.retention, "abstract": pub.abstract,
                              "gain": pub.gain.value, "binary oracle": pub.oracle}[c["row"]]  # fmt: skip
        if c["row"] == "gain":
            assert (c["helped"], c["harmed"]) == (int((ab > ret).sum()), int((ab < ret).sum()))
            assert (c["paper_helped"], c["paper_harmed"]) == (pub.gain.helped, pub.gain.harmed)


def test_table_12_oracle_fixed_and_per_budget_policy_against_references():
    """The oracle is the best action per row (never harmful), a fixed operator its column, the
    per-budget policy the fit folds' best action at that budget; the macro row is the mean of
    the per-budget accuracies (every question has every budget)."""
    from paper_checks.tables._crossfit import crossfit_evaluate

    paired = paired_from_rows(_rows(n_q=15))
    ev = crossfit_evaluate(jax.random.key(1), paired)
    cells = table_12(jax.random.key(2), paired, ev, n_resamples=50)
    assert [c["row"] for c in cells[::5]] == list(TABLE_12_ROWS)
    y = np.asarray(ev.outcomes)
    by = {(c["row"], c["budget"]): c for c in cells}
    for b in (32, 64, 128, 256):
        at = ev.budget == b
        assert by[("action oracle", b)]["ours"] == pytest.approx(y[at].max(axis=1).mean(), abs=1e-6)
        assert by[("action oracle", b)]["harms"] == 0
        assert by[("fixed merge", b)]["ours"] == pytest.approx(y[at, 1].mean(), abs=1e-6)
        assert by[("fixed merge", b)]["harms"] == int((y[at, 1] < y[at, 0]).sum())
    chosen = per_budget_fixed(ev)
    for f in range(5):
        for b in (32, 64, 128, 256):
            seen, test = (ev.fold != f) & (ev.budget == b), (ev.fold == f) & (ev.budget == b)
            means = [y[seen, a].mean() for a in range(4)]
            best = next(a for a in range(4) if means[a] == max(means))  # ties to the earlier
            assert (chosen[test] == best).all()
    for row in TABLE_12_ROWS:
        macro = by[(row, "macro")]
        per = [by[(row, b)]["ours"] for b in (32, 64, 128, 256)]
        assert macro["ours"] == pytest.approx(np.mean(per), abs=1e-6)
        assert macro["paper"] == TABLE_12_MACRO[row]


def test_controlled_rows_keep_tables_6_and_12_not_made():
    from paper_checks.tables._design import paper_tables

    tables = paper_tables(jax.random.key(0), paired_from_rows(_rows(tag=None)), n_resamples=20)
    assert "table_6" not in tables and "table_12" not in tables
    reasons = {t["table"]: t["reason"] for t in tables["not_made"]}
    assert (
        "not of the full-history design" in reasons["6"]
        and "--protocol end-to-end" in reasons["12"]
    )


def _tables_of(paired_file: Path) -> dict:
    rc, out, err = _main(
        [
            "paper-checks",
            "--paired",
            str(paired_file),
            "--design",
            "paper",
            "--tables-only",
            "--json",
        ]
    )
    assert rc == 0, err
    return json.loads(out)["tables"]


def _check_all_cells(tables: dict, budgets: list[int]) -> None:
    assert not {"6", "12"} & {t["table"] for t in tables["not_made"]}
    t6, t12 = tables["table_6"]["cells"], tables["table_12"]["cells"]
    assert [(c["row"], c["budget"]) for c in t6] == [
        (r, b) for r in ("retention", "abstract", "gain", "binary oracle") for b in budgets
    ]
    assert [(c["row"], c["budget"]) for c in t12] == [
        (r, b) for r in TABLE_12_ROWS for b in [*budgets, "macro"]
    ]
    for c in t6 + t12:
        assert c["ours"] is not None and None not in c["question_interval"]
    assert "not the paper's DeepSeek" in tables["table_12"]["note"]


@needs_locomo
def test_full_history_tables_from_a_real_locomo_slice(tmp_path):
    out = tmp_path / "fh.jsonl"
    argv = ["pair", "locomo", "--design", "paper", "--protocol", "end-to-end", "--limit", "6"]
    argv += ["--type-source", "gold", "--data", str(LOCOMO_PATH), "--output", str(out), "-q"]
    rc, _, err = _main(argv)
    assert rc == 0, err
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["config"]["design"] == "paper" and meta["config"]["candidates"] == "full-history"
    tables = _tables_of(out)
    _check_all_cells(tables, [16, 32, 64, 128])
    from paper_checks.tables._design import tables_markdown

    md = tables_markdown(tables)
    assert "## Table 6: full-history BM25" in md and "## Table 12: full-history" in md
    assert ", the full-history design: BM25 top 20 turns" in md


def test_full_history_tables_from_the_longmemeval_fixture(tmp_path):
    out = tmp_path / "lme.jsonl"
    argv = ["pair", "longmemeval", "--design", "paper", "--protocol", "end-to-end"]
    argv += ["--type-source", "gold", "--operators", "extractive", "-q"]
    argv += ["--data", str(FIX / "longmemeval_paper.json"), "--output", str(out)]
    rc, _, err = _main(argv)
    assert rc == 0, err
    tables = _tables_of(out)
    assert tables["dataset"] == "longmemeval"
    _check_all_cells(tables, [32, 64, 128, 256])
    assert all(c["paper"] is not None for c in tables["table_6"]["cells"])


def _bullet(title: str) -> str:
    model = Path(__file__).resolve().parents[3] / "shared" / "docs" / "MODEL.md"
    if not model.exists():
        pytest.skip(f"{model} not present")
    text = model.read_text(encoding="utf-8")
    start = text.index(f"- {title}")
    return " ".join(text[start : text.find("\n- ", start + 2)].split())


def test_tables_6_and_12_published_values_match_model_text():
    """MODEL §11's bullets parsed here: a transcription typo in ``_published`` fails."""
    import re

    from paper_checks._published import TABLE_12

    num = r"([+-]?\d*\.\d+)"
    text = _bullet("Table 6,")
    pattern = rf"(\d+): {num} / {num} / {num} \[{num}, {num}\] \((\d+)/(\d+)\) / {num}"
    found = re.findall(pattern, text)
    assert [int(f[0]) for f in found] == [32, 64, 128, 256]
    for b, ret, ab, g, lo, hi, h, m, orc in found:
        cell = TABLE_6[int(b)]
        assert (cell.retention, cell.abstract, cell.oracle) == (float(ret), float(ab), float(orc))
        assert tuple(cell.gain) == (float(g), float(lo), float(hi), int(h), int(m))
    text = _bullet("Table 12,").replace("**", "")
    body = text.split("macro: ", 1)[1].split(". The authors", 1)[0]
    segments = body.split("; ")
    assert [seg.rsplit(" ", 1)[0].split(" .")[0] for seg in segments] == list(TABLE_12_ROWS)
    for row, seg in zip(TABLE_12_ROWS, segments, strict=True):
        vals = re.findall(rf"{num}(?: \((\d+)\))?", seg[len(row) :])
        *cells, macro = vals
        assert TABLE_12_MACRO[row] == float(macro[0]), row
        assert len(cells) in (0, 4), row
        for b, (acc, harms) in zip((32, 64, 128, 256), cells, strict=False):
            assert TABLE_12[(row, b)] == (float(acc), int(harms) if harms else None), (row, b)
        assert sum(r == row for r, _ in TABLE_12) == len(cells)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--protocol", "end-to-end"], "needs --design paper"),
        (["--design", "paper", "--protocol", "end-to-end", "--paired", "x.jsonl"], "--paired file"),
    ],
)
def test_paper_checks_protocol_refusals_are_one_line(extra, message):
    rc, _, err = _main(
        ["paper-checks", "--tables-only", *extra]
        if "--design" in extra
        else ["paper-checks", *extra]
    )
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1
