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


def _four_cells(text: str, op: str, pattern: re.Pattern) -> list:
    """The four budget cells of operator ``op``'s row in a bullet's ``op + ...;`` segment."""
    seg = text[text.index(f"{op} +") :].split(";", maxsplit=1)[0]
    cells = pattern.findall(seg)
    assert len(cells) == 4, (op, seg)
    return cells


def test_table_4_cells_match_model_text():
    text = _bullet("Table 4,")
    pattern = re.compile(rf"{NUM} \[{NUM}, {NUM}\] \((\d+)/(\d+)\)")
    for op in pub.OPERATORS:
        cells = _four_cells(text, op, pattern)
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
        cells = _four_cells(text, op, pattern)
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


def test_table_1_cells_match_model_text():
    text = _bullet("Table 1,")
    at128, at256 = text.split("At 256,")
    cell = re.compile(rf"(abstract|merge|rewrite) {NUM} \({NUM}/{NUM}; (\d+)\)")
    for stratum in ("incomplete", "complete"):
        found = cell.findall(at128[at128.index(f" {stratum} fit") :])[:3]
        assert [f[0] for f in found] == list(pub.OPERATORS), stratum
        for op, v, h, m, n in found:
            assert pub.TABLE_1[(stratum, op, 128)] == _num(v)
            assert pub.TABLE_1_RATES[(stratum, op, 128)] == (_num(h), _num(m))
            assert pub.TABLE_1_N[(stratum, 128)] == int(n)
    for stratum in ("incomplete", "complete"):
        seg = at256[at256.index(f" {stratum} (n = ") :]
        n = re.match(r" \w+ \(n = (\d+)\)", seg)
        assert n is not None and pub.TABLE_1_N[(stratum, 256)] == int(n[1])
        found = re.findall(rf"(abstract|merge|rewrite) {NUM}", seg)[:3]
        assert [f[0] for f in found] == list(pub.OPERATORS)
        for op, v in found:
            assert pub.TABLE_1[(stratum, op, 256)] == _num(v)
    assert len(pub.TABLE_1) == 12


def test_table_7_cells_match_model_text():
    text = _bullet("Table 7,")
    names: dict[str, str] = {"temporal": "temporal-reasoning"}
    pattern = re.compile(rf"([a-z-]+) \((\d+)\) {NUM} / {NUM} / {NUM}")
    found = pattern.findall(text)
    assert len(found) == 5
    for name, n, *vals in found:
        t = str(names.get(name, name))
        assert pub.TABLE_7_N[t] == int(n)
        for op, v in zip(pub.OPERATORS, vals, strict=True):
            assert pub.TABLE_7[(t, op)] == _num(v), (t, op)
    assert len(pub.TABLE_7) == 15


def test_table_9_cells_match_model_text():
    text = _bullet("Table 9,")
    for row, label, scale in (("mean fit", "mean fit", 1.0), ("full fit", "full fit", 100.0),
                              ("zero fit", "zero fit", 100.0)):  # fmt: skip
        seg = text[text.index(label) + len(label) :]
        vals = re.findall(r"(\d*\.?\d+)", seg)[:4]
        for b, v in zip(pub.TABLE_9_BUDGETS, vals, strict=True):
            assert pub.TABLE_9[(row, b)] == pytest.approx(float(v) / scale, abs=1e-12), (row, b)


def test_table_10_cells_match_model_text():
    text = _bullet("Table 10,")
    for first, second in pub.TABLE_10_ROWS:
        row = f"{first} - {second}"
        seg = text[text.index(row) + len(row) :].split(";")[0]
        cells = re.findall(rf"{NUM}(?: \[{NUM}, {NUM}\])?", seg)[:4]
        for b, (v, lo, hi) in zip(pub.TABLE_10_BUDGETS, cells, strict=True):
            want = pub.Gain(_num(v), _num(lo) if lo else None, _num(hi) if hi else None)
            assert pub.TABLE_10[(row, b)] == want, (row, b)


def test_table_11_cells_match_model_text():
    """MODEL §11, Table 11: MLP - ridge accuracy with its interval, and the ridge's accuracy."""
    text = _bullet("Table 11,")
    cells = re.findall(rf"{NUM} \[{NUM}, {NUM}\]", text)
    assert len(cells) == 4, text
    for b, (v, lo, hi) in zip(pub.TABLE_11_BUDGETS, cells, strict=True):
        assert pub.TABLE_11[(pub.TABLE_11_ROW, b)] == pub.Gain(_num(v), _num(lo), _num(hi)), b
    ridge = re.findall(NUM, text[text.index("(ridge") :])
    assert [pub.TABLE_11_RIDGE[b] for b in pub.TABLE_11_BUDGETS] == [_num(r) for r in ridge]
    assert len(pub.TABLE_11) == 4
