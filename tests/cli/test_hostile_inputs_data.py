"""Hostile paired-data and dataset files that must not lose anything (issue 35, item 11).

- A key given twice in one JSON object: Python's ``json`` keeps the last without a word, so the
  file says two things; it is refused naming the file, the row and the key (paired JSONL rows, a
  CSV ``structure`` cell, LoCoMo and LongMemEval files).
- An outcome written as the string ``"1"``: refused in JSONL naming the row and the column; a CSV
  cell is text by the format and is read with JSON's number grammar, so ``"1"`` means 1 in CSV and
  nothing else anywhere (``1_0`` or a padded cell, which ``float()`` would take, are refused).

References: MODEL §8 (paired data), §9 (datasets); docs/paired-data.md.
"""

from __future__ import annotations

import json

import pytest

import oas
from oas.real import load_locomo, load_longmemeval
from retcon.errors import InputError


def _row(**over) -> dict:
    row = {
        "instance_id": "a-1",
        "query_id": "q-1",
        "group_id": "g-1",
        "query_type": "single-hop",
        "budget": 256,
        "y_ret": 1,
        "y_merge": 0,
        "y_abstract": 0.5,
        "y_rewrite": 0,
        "cluster_lengths": [100.0, 50.0],
        "session_ids": ["s1", "s2"],
        "embeddings": [[1.0, 0.0], [0.0, 1.0]],
    }
    row.update(over)
    return row


def _jsonl(tmp_path, lines: list[str]):
    p = tmp_path / "paired.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _csv(tmp_path, rows: list[dict]):
    from oas._paired_format import csv_cell

    cols = list(rows[0])
    lines = [",".join(cols)]
    for r in rows:
        cells = []
        for c in cols:
            text = csv_cell(r[c])
            cells.append(
                '"' + text.replace('"', '""') + '"' if "," in text or '"' in text else text
            )
        lines.append(",".join(cells))
    p = tmp_path / "paired.csv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_valid_rows_read_alike_from_jsonl_and_csv(tmp_path):
    rows = [_row(), _row(instance_id="a-2", budget=512, y_ret=0, y_abstract=1e-05)]
    a = oas.read_paired(_jsonl(tmp_path, [json.dumps(r) for r in rows]))
    b = oas.read_paired(_csv(tmp_path, rows))
    assert a.outcomes.tolist() == b.outcomes.tolist()
    assert a.budget.tolist() == b.budget.tolist() == [256.0, 512.0]


def test_duplicate_key_in_a_jsonl_row_is_refused(tmp_path):
    good = json.dumps(_row())
    text = json.dumps(_row(instance_id="a-2"))
    dup = text[:-1] + ', "y_ret": 0}'  # y_ret given twice: 1, then 0
    p = _jsonl(tmp_path, [good, dup])
    with pytest.raises(InputError) as err:
        oas.read_paired(p)
    msg = str(err.value)
    assert msg.startswith(f"{p}:2: duplicate key 'y_ret'"), msg
    assert "\n" not in msg


def test_duplicate_key_nested_in_a_jsonl_row_is_refused(tmp_path):
    text = json.dumps(_row())
    dup = text[:-1] + ', "meta_x": {"a": 1, "a": 2}}'
    with pytest.raises(InputError, match=r"paired\.jsonl:1: duplicate key 'a'"):
        oas.read_paired(_jsonl(tmp_path, [dup]))


@pytest.mark.parametrize("column", ["y_ret", "y_merge", "budget"])
def test_number_as_string_in_jsonl_is_refused(tmp_path, column):
    p = _jsonl(tmp_path, [json.dumps(_row()), json.dumps(_row(instance_id="a-2", **{column: "1"}))])
    with pytest.raises(InputError) as err:
        oas.read_paired(p)
    msg = str(err.value)
    assert msg.startswith(f"{p}:2: field {column!r} must be a number; got the string '1'"), msg


def test_number_as_string_inside_a_jsonl_list_is_refused(tmp_path):
    p = _jsonl(tmp_path, [json.dumps(_row(cluster_lengths=["100", 50.0]))])
    with pytest.raises(
        InputError, match=r":1: field 'cluster_lengths' must be a number; got the string"
    ):
        oas.read_paired(p)


def test_csv_outcome_cell_one_is_one(tmp_path):
    # In CSV every cell is text: "1" is the number 1, as the JSONL row's 1 is (documented).
    d = oas.read_paired(_csv(tmp_path, [_row(y_ret=1)]))
    assert d.outcomes[0, 0] == 1.0


@pytest.mark.parametrize("cell", ["1_0", " 1", "1 ", "0x1", "１", "1.", ".5", "+1"])
def test_csv_number_cells_outside_json_grammar_are_refused(tmp_path, cell):
    p = tmp_path / "paired.csv"
    good = _csv(tmp_path, [_row()]).read_text(encoding="utf-8").splitlines()
    header = good[0].split(",")
    cells = good[1].split(",", 5)  # the first five cells: ids, type, budget
    i = header.index("budget")
    cells[i] = cell
    p.write_text(good[0] + "\n" + ",".join(cells) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        oas.read_paired(p)
    assert f"{p}:2: field 'budget' must be a number; got {cell!r}" in str(err.value)


def test_csv_structure_cell_with_duplicate_key_is_refused(tmp_path):
    from oas._structure import STRUCTURE_COLUMN

    row = _row()
    p = _csv(tmp_path, [row])
    lines = p.read_text(encoding="utf-8").splitlines()
    cell = '"{""a"": 1, ""a"": 2}"'
    p.write_text(f"{lines[0]},{STRUCTURE_COLUMN}\n{lines[1]},{cell}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"paired\.csv:2: duplicate key 'a'"):
        oas.read_paired(p)


def _locomo_conv(i: int) -> str:
    return json.dumps(
        {
            "sample_id": f"conv-{i}",
            "conversation": {
                "speaker_a": "A",
                "speaker_b": "B",
                "session_1_date_time": "1 Jan 2023",
                "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
            },
            "qa": [{"question": "q?", "answer": "a", "evidence": ["D1:1"], "category": 1}],
        },
        indent=1,
    )


def test_locomo_duplicate_key_names_file_record_and_key(tmp_path):
    second = _locomo_conv(1)
    dup = second.replace('"qa":', '"qa": [],\n "qa":', 1)
    p = tmp_path / "locomo.json"
    p.write_text("[\n" + _locomo_conv(0) + ",\n" + dup + "\n]\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_locomo(p)
    msg = str(err.value)
    assert "locomo.json" in msg and "record 1 (line " in msg and "duplicate key 'qa'" in msg, msg
    assert "\n" not in msg


def test_locomo_without_duplicates_still_reads(tmp_path):
    p = tmp_path / "locomo.json"
    p.write_text("[\n" + _locomo_conv(0) + "\n]\n", encoding="utf-8")
    assert len(load_locomo(p).conversations) == 1


def test_longmemeval_duplicate_key_is_refused(tmp_path):
    p = tmp_path / "lme.json"
    p.write_text('[{"question_id": "q1", "question_id": "q2"}]', encoding="utf-8")
    with pytest.raises(
        InputError, match=r"lme\.json'?: record 0 \(line 1\): duplicate key 'question_id'"
    ):
        load_longmemeval(p)


def test_duplicate_key_outside_a_top_level_list_is_named_without_a_record(tmp_path):
    p = tmp_path / "lme.json"
    p.write_text('{"a": 1, "a": 2}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_longmemeval(p)
    msg = str(err.value)
    assert "duplicate key 'a'" in msg and "record" not in msg, msg
