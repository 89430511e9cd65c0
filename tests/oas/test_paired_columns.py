"""The columnar JSONL path of ``oas.read_paired`` (``oas._paired_columns``) against the row path
(``validated_rows`` then ``assemble``): the same ``PairedData`` on every file it accepts, ``None``
on every file the row path refuses, so the row path's message (file, line, field) is the one a
user sees (MODEL §8, docs/paired-data.md)."""

import json

import numpy as np
import pytest

import oas
from oas._paired_columns import read_jsonl_columns
from oas._paired_features import assemble
from oas._paired_format import iter_raw_rows, validated_rows
from oas._structure import make_structure
from retcon.errors import InputError
from tests.oas.test_paired_format import feature_row, raw_row


def _rows_path(path, vocabulary=None, outcomes=True):
    rows = validated_rows(
        path, iter_raw_rows(path, outcomes=outcomes), vocabulary, outcomes=outcomes
    )
    return assemble(rows, path)


def _write(path, rows, blank_lines=False):
    sep = "\n\n  \n" if blank_lines else "\n"
    path.write_text(sep.join(json.dumps(r) for r in rows) + "\n")
    return path


def _same(a, b):
    assert a._fields == b._fields
    for f in a._fields:
        x, y = getattr(a, f), getattr(b, f)
        if f == "meta":
            assert list(x) == list(y)
            for k in x:
                assert x[k].dtype == y[k].dtype == object and x[k].tolist() == y[k].tolist(), k
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f
            if x.dtype == object:
                assert x.tolist() == y.tolist(), f
            else:
                assert x.tobytes() == y.tobytes(), f
        else:
            assert x == y, f


def _structure(i):
    lengths = {a: [10.0 + i, 20.5] for a in ("ret", "merge", "abstract", "rewrite")}
    flags = {a: [1, 0] if i % 3 else [0, 0] for a in lengths}  # every third row: a miss
    return make_structure("prefix", lengths, flags)


GOOD = {
    "plain": [feature_row(i) for i in range(6)],
    "integer ids and values": [
        feature_row(i, instance_id=i, budget=64, y_ret=1, token_pressure=3) for i in range(5)
    ],
    "meta and structure": [
        feature_row(i, meta_source=["a", i], evidence_structure=_structure(i), cluster_tokens=7.0)
        for i in range(7)
    ],
    "old meta_cluster_tokens": [feature_row(i, meta_cluster_tokens=12) for i in range(3)],
    "no outcomes": [
        {k: v for k, v in feature_row(i).items() if not k.startswith("y_")} for i in range(4)
    ],
}


@pytest.mark.parametrize("case", sorted(GOOD))
@pytest.mark.parametrize("blank_lines", [False, True])
def test_columnar_read_is_the_row_path(case, blank_lines, tmp_path):
    path = _write(tmp_path / "d.jsonl", GOOD[case], blank_lines)
    outcomes = case != "no outcomes"
    got = read_jsonl_columns(path, None, outcomes=outcomes)
    assert got is not None
    _same(got, _rows_path(path, outcomes=outcomes))


def _bad_structure():
    cell = _structure(1)
    cell["evidence"]["merge"] = [1, 0, 0]
    return cell


BAD = {
    "string number": [feature_row(0), feature_row(1, budget="64")],
    "boolean outcome": [feature_row(0), feature_row(1, y_ret=True)],
    "outcome above 1": [feature_row(0), feature_row(1, y_merge=1.5)],
    "zero budget": [feature_row(0, budget=0)],
    "huge feature": [feature_row(0, token_pressure=1e13)],
    "one-hot": [feature_row(0), feature_row(1, query_type_1=0.0)],
    "duplicate id": [feature_row(0), feature_row(1, instance_id="i0")],
    "blank id": [feature_row(0, group_id=" ")],
    "two vocabularies": [feature_row(0), feature_row(1, query_type="multi-session")],
    "unknown column": [feature_row(0), feature_row(1, y_merg=0.5)],
    "negative cluster tokens": [feature_row(0, cluster_tokens=-1.0)],
    "structure ragged": [feature_row(1, evidence_structure=_bad_structure())],
    "structure miss flagged": [
        feature_row(
            0,
            evidence_structure={
                "packing": "prefix",
                "lengths": {a: [5.0] for a in ("ret", "merge", "abstract", "rewrite")},
                "evidence": {"ret": [0], "merge": [1], "abstract": [0], "rewrite": [0]},
            },
        )
    ],
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_columnar_read_leaves_every_refusal_to_the_row_path(case, tmp_path):
    path = _write(tmp_path / "bad.jsonl", BAD[case])
    assert read_jsonl_columns(path, None, outcomes=True) is None
    with pytest.raises(InputError) as row_error:
        _rows_path(path)
    with pytest.raises(InputError) as read_error:
        oas.read_paired(path)
    assert str(read_error.value) == str(row_error.value)
    assert "bad.jsonl:" in str(read_error.value)


def test_columnar_read_hands_duplicate_keys_bad_json_and_raw_rows_to_the_row_path(tmp_path):
    dup = tmp_path / "dup.jsonl"
    dup.write_text(json.dumps(feature_row(0)) + '\n{"y_ret": 1, "y_ret": 0}\n')
    assert read_jsonl_columns(dup, None, outcomes=True) is None
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(feature_row(0)) + "\n{not json\n")
    assert read_jsonl_columns(bad, None, outcomes=True) is None
    raw = _write(tmp_path / "raw.jsonl", [raw_row(i) for i in range(3)])
    assert read_jsonl_columns(raw, None, outcomes=True) is None
    # integer token lengths are converted by the row path: the columns leave them to it
    cell = _structure(1)
    cell["lengths"]["ret"] = [10, 20]
    ints = _write(tmp_path / "ints.jsonl", [feature_row(1, evidence_structure=cell)])
    assert read_jsonl_columns(ints, None, outcomes=True) is None


@pytest.mark.parametrize("case", sorted(GOOD))
def test_columnar_write_has_the_bytes_of_the_row_path(case, tmp_path):
    """``write_paired(PairedData)`` to JSONL writes from columns; the bytes are those of
    ``json.dumps`` of each ``paired_rows`` row in the format's column order."""
    from oas._paired import paired_rows
    from oas._paired_format import ordered_row

    outcomes = case != "no outcomes"
    data = oas.read_paired(_write(tmp_path / "d.jsonl", GOOD[case]), outcomes=outcomes)
    if not outcomes:  # write_paired needs outcomes: give them
        data = data._replace(outcomes=np.full((data.n, 4), 0.5))
    out = oas.write_paired(tmp_path / "out.jsonl", data)
    rows = paired_rows(data)
    expected = "".join(json.dumps(ordered_row(r), allow_nan=False) + "\n" for r in rows)
    assert out.read_text() == expected
