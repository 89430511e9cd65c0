"""``PairedData.to_pandas`` and ``read_paired(..., as_frame=True)``: the paired-data format as a
``pandas.DataFrame`` (docs/paired-data.md), pandas optional.

The reference is the ``PairedData`` arrays themselves and the file's own rows: a frame's columns
are the format's columns in its order, and its values are the arrays'.
"""

import json
import sys

import numpy as np
import pytest

import oas
from oas._checks import OUTCOME_COLUMNS
from oas._paired import paired_rows
from retcon.vocab import ACTIONS


def _rows(n=12):
    types = ["single-hop", "multi-hop", "temporal", "open-domain"]
    rows = []
    for i in range(n):
        row = {
            "instance_id": f"q{i}@{64 * (1 + i % 3)}",
            "query_id": f"q{i}",
            "group_id": f"conv-{i % 4}",
            "query_type": types[i % 4],
            "budget": 64.0 * (1 + i % 3),
            **{c: float((i + a) % 2) for a, c in enumerate(OUTCOME_COLUMNS)},
            "cluster_lengths": [10 + i, 30, 5 * (i % 5 + 1)],
            "session_ids": [0, 1, i % 2],
            "embeddings": [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0 + i]],
            "meta_source": f"s{i % 3}",
        }
        rows.append(row)
    return rows


@pytest.fixture
def paired_file(tmp_path):
    path = tmp_path / "paired.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    return path


def test_frame_holds_the_arrays_in_the_format_order(paired_file):
    pytest.importorskip("pandas")
    data = oas.read_paired(paired_file)
    df = data.to_pandas()
    assert list(df.columns) == list(paired_rows(data)[0])  # the order write_paired uses
    assert len(df) == data.n and list(df.index) == list(range(data.n))
    for c in ("instance_id", "query_id", "group_id", "query_type"):
        assert list(df[c]) == [str(v) for v in getattr(data, c)]
    np.testing.assert_array_equal(df["budget"].to_numpy(), data.budget)
    np.testing.assert_array_equal(df[list(OUTCOME_COLUMNS)].to_numpy(), data.outcomes)
    np.testing.assert_array_equal(df[list(oas.FEATURE_NAMES)].to_numpy(), data.features)
    assert data.cluster_tokens is not None
    np.testing.assert_array_equal(df["cluster_tokens"].to_numpy(), data.cluster_tokens)
    assert list(df["meta_source"]) == list(data.meta["meta_source"])
    assert [f"y_{a}" for a in ACTIONS] == list(OUTCOME_COLUMNS)


def test_read_paired_as_frame_equals_to_pandas(paired_file):
    pd = pytest.importorskip("pandas")
    df = oas.read_paired(paired_file, as_frame=True)
    assert isinstance(df, pd.DataFrame)
    pd.testing.assert_frame_equal(df, oas.read_paired(paired_file).to_pandas())


def test_frame_records_read_back_as_the_same_data(paired_file):
    """The frame's records are valid paired-data rows (features by name): they give the data."""
    pytest.importorskip("pandas")
    data = oas.read_paired(paired_file)
    back = oas.paired_from_rows(data.to_pandas().to_dict("records"))
    for name in ("budget", "outcomes", "features", "cluster_tokens"):
        np.testing.assert_array_equal(getattr(back, name), getattr(data, name))
    assert list(back.group_id) == list(data.group_id)


def test_frame_of_data_without_cluster_tokens(paired_file):
    pytest.importorskip("pandas")
    data = oas.read_paired(paired_file)._replace(cluster_tokens=None, meta={})
    cols = list(data.to_pandas().columns)
    assert "cluster_tokens" not in cols and cols[-1] == oas.FEATURE_NAMES[-1]


def test_without_pandas_the_error_names_the_extra(paired_file, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    data = oas.read_paired(paired_file)
    with pytest.raises(ImportError, match=r"PairedData.to_pandas needs pandas.*retcon\[pandas\]"):
        data.to_pandas()
    with pytest.raises(ImportError, match=r"as_frame=True\) needs pandas.*retcon\[pandas\]"):
        oas.read_paired(paired_file, as_frame=True)
