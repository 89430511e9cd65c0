"""Table 5 (MODEL §11, the second answer model): ``paper-checks --design paper --second-reader
FILE`` makes it from FILE's rows by Table 6's computation, beside the paper's GLM-5.2 values; the
file is refused unless it holds the main rows' design, dataset, question ids and budgets."""

import contextlib
import io
import json
import re
from pathlib import Path

import jax
import numpy as np
import pytest

from oas import paired_from_rows
from paper_checks._published import TABLE_5
from paper_checks.tables._tables_5_6_12 import table_5, table_6
from tests._data import LOCOMO_PATH, needs_locomo
from tests.paper_checks.test_tables_history import _bullet, _rows

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _main(argv: list[str]) -> tuple[int, str, str]:
    from retcon.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([*argv, "--no-progress"] if argv[0] == "pair" else argv)
    return rc, out.getvalue(), err.getvalue()


def _pair_lme(tmp_path: Path, reader: str) -> Path:
    out = tmp_path / f"lme_{reader}.jsonl"
    argv = ["pair", "longmemeval", "--design", "paper", "--operators", "extractive", "-q"]
    argv += ["--reader", reader, "--data", str(FIX / "longmemeval_paper.json")]
    rc, _, err = _main([*argv, "--output", str(out)])
    assert rc == 0, err
    return out


def _tables(main: Path, second: Path | None, out: Path | None = None) -> tuple[int, str, str]:
    argv = ["paper-checks", "--paired", str(main), "--design", "paper", "--tables-only", "--json"]
    argv += ["--second-reader", str(second)] if second is not None else []
    argv += ["--out", str(out), "--no-figures"] if out is not None else []
    return _main(argv)


def _reference(path: Path) -> dict:
    """Per budget, straight from the file's rows: mean y_ret, mean y_abstract, helped, harmed."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = {}
    for b in sorted({r["budget"] for r in rows}):
        at = [r for r in rows if r["budget"] == b]
        d = [r["y_abstract"] - r["y_ret"] for r in at]
        out[int(b)] = {
            "retention": sum(r["y_ret"] for r in at) / len(at),
            "abstract": sum(r["y_abstract"] for r in at) / len(at),
            "gain": sum(d) / len(at),
            "hh": (sum(x > 0 for x in d), sum(x < 0 for x in d)),
        }
    return out


def _check_against_reference(t5: dict, ref: dict) -> None:
    by = {(c["row"], c["budget"]): c for c in t5["cells"]}
    assert sorted(by) == sorted((r, b) for r in ("retention", "abstract", "gain") for b in ref)
    for b, want in ref.items():
        for row in ("retention", "abstract", "gain"):
            assert by[(row, b)]["ours"] == pytest.approx(want[row], abs=1e-6), (row, b)
        assert (by[("gain", b)]["helped"], by[("gain", b)]["harmed"]) == want["hh"], b
        pub = TABLE_5.get(b)
        assert by[("retention", b)]["paper"] == (None if pub is None else pub.retention)
        assert by[("gain", b)]["paper_helped"] == (None if pub is None else pub.gain.helped)


def test_table_5_is_table_6_without_the_oracle_row():
    """One computation: Table 5's cells are Table 6's retention / abstract / gain cells (same keys,
    same intervals), the paper's values those of TABLE_5."""
    paired = paired_from_rows(_rows())
    key = jax.random.key(2)
    t5, t6 = table_5(key, paired, n_resamples=50), table_6(key, paired, n_resamples=50)
    assert [c["row"] for c in t5] == [c["row"] for c in t6 if c["row"] != "binary oracle"]
    for a, b in zip(t5, t6, strict=False):
        assert (a["ours"], a["question_interval"]) == (b["ours"], b["question_interval"])
        pub = TABLE_5[a["budget"]]
        want = {"retention": pub.retention, "abstract": pub.abstract, "gain": pub.gain.value}
        assert a["paper"] == want[a["row"]]


def test_table_5_from_a_second_reader_of_the_longmemeval_fixture(tmp_path):
    main, second = _pair_lme(tmp_path, "lexical"), _pair_lme(tmp_path, "sentence")
    ref, ref_main = _reference(second), _reference(main)
    assert any(ref[b]["retention"] != ref_main[b]["retention"] for b in ref)  # readers differ
    rc, _, err = _tables(main, None)
    assert rc == 0, err
    rc, out, err = _tables(main, second, tmp_path / "run")
    assert rc == 0, err
    tables = json.loads(out)["tables"]
    assert "5" not in {t["table"] for t in tables["not_made"]}
    t5 = tables["table_5"]
    assert t5["reader"] == "sentence" and "GLM-5.2" in t5["note"]
    _check_against_reference(t5, ref)
    md = (tmp_path / "run" / "TABLES.md").read_text()
    assert "## Table 5: second answer model" in md and "read by sentence" in md
    assert "| gain | 32 | 48 |" in md and "| 37/1 |" in md  # ours beside the paper's h/h


def test_without_the_option_table_5_stays_not_made(tmp_path):
    rc, out, err = _tables(_pair_lme(tmp_path, "lexical"), None)
    assert rc == 0, err
    tables = json.loads(out)["tables"]
    assert "table_5" not in tables and "5" in {t["table"] for t in tables["not_made"]}


@needs_locomo
def test_table_5_from_a_second_reader_of_a_real_locomo_slice(tmp_path):
    files = {}
    for reader, limit in (("lexical", "6"), ("sentence", "6"), ("sentence4", "4")):
        files[reader] = tmp_path / f"{reader}.jsonl"
        argv = ["pair", "locomo", "--design", "paper", "--limit", limit, "-q"]
        argv += ["--reader", reader.rstrip("4"), "--data", str(LOCOMO_PATH)]
        rc, _, err = _main([*argv, "--output", str(files[reader])])
        assert rc == 0, err
    rc, out, err = _tables(files["lexical"], files["sentence"])
    assert rc == 0, err
    _check_against_reference(json.loads(out)["tables"]["table_5"], _reference(files["sentence"]))
    # mismatched question ids: refused, naming the option, the file and the missing ids
    rc, _, err = _tables(files["lexical"], files["sentence4"])
    ids = {json.loads(x)["query_id"] for x in files["lexical"].read_text().splitlines()}
    ids -= {json.loads(x)["query_id"] for x in files["sentence4"].read_text().splitlines()}
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert f"--second-reader {files['sentence4']}" in err
    assert "expected the main rows' 6 question ids; got 4: 2 missing" in err
    assert all(q in err for q in ids)


def _rewrite(src: Path, dst: Path, keep=lambda r: True, drop: str | None = None) -> Path:
    """``src``'s rows that ``keep``, without the column ``drop``, written to ``dst``."""
    rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    rows = [{k: v for k, v in r.items() if k != drop} for r in rows if keep(r)]
    dst.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return dst


def test_second_reader_refusals_name_the_option_and_file(tmp_path):
    main, second = _pair_lme(tmp_path, "lexical"), _pair_lme(tmp_path, "sentence")
    q0 = json.loads(second.read_text().splitlines()[0])["query_id"]
    cases = [
        (
            _rewrite(second, tmp_path / "fewer.jsonl", lambda r: r["query_id"] != q0),
            f"got 47: 1 missing ({q0})",
        ),
        (
            _rewrite(second, tmp_path / "budgets.jsonl", lambda r: r["budget"] != 256),
            "expected the main rows' budgets [32, 64, 128, 256]; got [32, 64, 128]",
        ),
        (
            _rewrite(second, tmp_path / "ours.jsonl", drop="meta_design"),
            "its rows are of design ours; the main rows are of design paper",
        ),
        (tmp_path / "absent.jsonl", "--second-reader: no such file"),
    ]
    for path, message in cases:
        rc, _, err = _tables(main, path)
        assert rc == 2 and message in err and len(err.strip().splitlines()) == 1, err
        assert "--second-reader" in err and str(path) in err
    rc, _, err = _main(["paper-checks", "--paired", str(main), "--second-reader", str(second)])
    assert rc == 2 and "needs --design paper" in err and len(err.strip().splitlines()) == 1


def test_table_5_published_values_match_model_text():
    """MODEL §11's Table 5 bullet parsed here: a transcription typo in ``_published`` fails."""
    num = r"([+-]?\d*\.\d+)"
    text = _bullet("Table 5,").split("(DeepSeek", 1)[0]
    cells = re.findall(rf"{num} / {num} / {num} \[{num}, {num}\] \((\d+)/(\d+)\)", text)
    assert len(cells) == 4 == len(TABLE_5)
    for b, (ret, ab, g, lo, hi, h, m) in zip((32, 64, 128, 256), cells, strict=True):
        cell = TABLE_5[b]
        assert (cell.retention, cell.abstract) == (float(ret), float(ab))
        assert tuple(cell.gain) == (float(g), float(lo), float(hi), int(h), int(m))
        assert np.isclose(cell.abstract - cell.retention, cell.gain.value, atol=1e-3)


def test_second_reader_is_named_from_the_sidecar_else_the_stem():
    """The reader of Table 5 (MODEL §11: GLM-5.2 in the paper) named from FILE's sidecar."""
    from types import SimpleNamespace

    from paper_checks.tables._design import second_reader_name

    llm = {"sidecar": {"config": {"reader": "llm", "llm_model": "glm-5.2"}}}
    assert second_reader_name(SimpleNamespace(name="x", provenance=llm)) == "llm (glm-5.2)"
    lex = {"sidecar": {"config": {"reader": "sentence"}}}
    assert second_reader_name(SimpleNamespace(name="x", provenance=lex)) == "sentence"
    none = {"sidecar": None}
    assert second_reader_name(SimpleNamespace(name="stem", provenance=none)) == "stem"
