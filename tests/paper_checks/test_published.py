"""The published constants match MODEL §11's text: each table's bullet is parsed here, so a
transcription typo in ``paper_checks._published`` fails."""

import re
from pathlib import Path

import pytest

from paper_checks import _published as pub

MODEL = Path(__file__).resolve().parents[3] / "shared" / "docs" / "MODEL.md"
NUM = r"([+-]?\d*\.\d+)"


def _bullet(title: str) -> str:
    if not MODEL.exists():
        pytest.skip(f"{MODEL} not present")
    text = MODEL.read_text(encoding="utf-8")
    start = text.index(f"- {title}")
    end = text.find("\n- ", start + 2)
    return " ".join(text[start:end].split())


def _num(s: str) -> float:
    return float(s)


def test_table_4_cells_match_model_text():
    text = _bullet("Table 4,")
    pattern = re.compile(rf"{NUM} \[{NUM}, {NUM}\] \((\d+)/(\d+)\)")
    for op in pub.OPERATORS:
        seg = text[text.index(f"{op} +") :].split(";")[0]
        cells = pattern.findall(seg)
        assert len(cells) == 4, (op, seg)
        for b, (v, lo, hi, h, m) in zip(pub.TABLE_4_BUDGETS, cells, strict=True):
            want = pub.Gain(_num(v), _num(lo), _num(hi), int(h), int(m))
            assert pub.TABLE_4[(op, b)] == want, (op, b)
    acc = re.search(rf"abstract and merge {NUM}, rewrite {NUM}, retention {NUM}", text)
    assert acc is not None
    assert {
        "abstract": _num(acc[1]),
        "merge": _num(acc[1]),
        "rewrite": _num(acc[2]),
        "ret": _num(acc[3]),
    } == pub.TABLE_4_ACCURACY_16


def test_table_3_cells_match_model_text():
    text = _bullet("Table 3,")
    pattern = re.compile(rf"{NUM} \[{NUM}, {NUM}\]")
    for op in pub.OPERATORS:
        seg = text[text.index(f"{op} +") :].split(";")[0]
        cells = pattern.findall(seg)
        assert len(cells) == 4, (op, seg)
        for b, (v, lo, hi) in zip(pub.TABLE_3_BUDGETS, cells, strict=True):
            assert pub.TABLE_3[(op, b)] == pub.Gain(_num(v), _num(lo), _num(hi)), (op, b)


def test_table_8_cells_match_model_text():
    text = _bullet("Table 8,").replace("**", "")
    names = {
        "retention": "retention",
        "training-selected fixed operator": "training-selected fixed operator",
        "evidence-fit rule": "evidence-fit rule",
        "k-NN utility router": "k-NN utility router",
        "direct OAS": "direct OAS",
        "calibrated OAS": "calibrated",
    }
    pattern = re.compile(rf"{NUM} \((\d+)\)")
    body = text.split("256:", 1)[1]
    for row, name in names.items():
        seg = body[body.index(f" {name} ") + len(name) + 1 :]
        cells = pattern.findall(seg)[:4]
        for b, (acc, harms) in zip(pub.TABLE_8_BUDGETS, cells, strict=True):
            assert pub.TABLE_8[(row, b)] == pub.Routed(_num(acc), int(harms)), (row, b)
    assert set(pub.TABLE_8_ROWS) == {row for row, _ in pub.TABLE_8}


def test_in_interval():
    assert pub.in_interval(0.1, 0.0, 0.2)
    assert pub.in_interval(0.2, 0.0, 0.2)
    assert not pub.in_interval(0.3, 0.0, 0.2)
