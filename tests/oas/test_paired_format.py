"""Paired-data format (docs/paired-data.md): round trips, resumable writing, and every validation
rule fed through the CLI (exit status 2, one line naming file, line and field)."""

import csv
import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import oas
from oas._checks import OUTCOME_COLUMNS
from retcon.cli import main
from retcon.errors import InputError


def raw_row(i, **over):
    row = {
        "instance_id": f"i{i}",
        "query_id": f"q{i // 2}",
        "group_id": f"g{i % 3}",
        "query_type": ["single-hop", "multi-hop", "temporal", "open-domain"][i % 4],
        "budget": [64, 256][i % 2],
        "y_ret": 1,
        "y_merge": 0,
        "y_abstract": 0.5,
        "y_rewrite": 1,
        "cluster_lengths": [40 + i, 90, 25],
        "session_ids": ["s1", "s2", "s1"],
        "embeddings": [[1.0, 0.0, 0.5], [0.0, 1.0, 0.2], [1.0, 1.0, float(i)]],
    }
    row.update(over)
    return {k: v for k, v in row.items() if v is not ...}


def feature_row(i, **over):
    row = raw_row(i)
    for c in ("cluster_lengths", "session_ids", "embeddings"):
        del row[c]
    slot = i % 4
    row.update({n: 0.1 * j for j, n in enumerate(oas.FEATURE_NAMES[:7])})
    row.update({f"query_type_{s}": float(s == slot) for s in range(4)})
    row.update(over)
    return {k: v for k, v in row.items() if v is not ...}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(rows[0]))
        for r in rows:
            w.writerow([json.dumps(v) if isinstance(v, list) else v for v in r.values()])
    return path


def test_raw_fields_give_the_features(tmp_path):
    """Raw-field rows get exactly compute_features (MODEL §8: one code for sim and real)."""
    rows = [raw_row(i) for i in range(6)]
    data = oas.read_paired(write_jsonl(tmp_path / "a.jsonl", rows))
    for i, r in enumerate(rows):
        ref = oas.compute_features(
            r["budget"], r["cluster_lengths"], r["session_ids"], r["embeddings"], i % 4
        )
        np.testing.assert_allclose(data.features[i], ref)
    assert data.vocabulary == "locomo" and data.outcomes.shape == (6, 4)
    np.testing.assert_array_equal(data.outcomes[0], [1, 0, 0.5, 1])


@given(
    st.lists(
        st.tuples(
            st.floats(0, 1),
            st.floats(0, 1),
            st.floats(0, 1),
            st.floats(0, 1),
            st.floats(1.0, 4096.0),
        ),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from(["jsonl", "csv"]),
)
def test_round_trip(tmp_path_factory, values, fmt):
    """write_paired then read_paired returns the same arrays, bit for bit, in JSONL and CSV."""
    rows = []
    for i, (a, b, c, d, budget) in enumerate(values):
        rows.append(
            feature_row(
                i,
                y_ret=a,
                y_merge=b,
                y_abstract=c,
                y_rewrite=d,
                budget=budget,
                token_pressure=budget / 7.0,
                meta_note=f"n{i}",
            )
        )
    path = tmp_path_factory.mktemp("rt") / f"x.{fmt}"
    first = oas.read_paired(oas.write_paired(path, rows))
    second = oas.read_paired(oas.write_paired(path, first))
    for got, want in zip(second[:7], first[:7]):
        np.testing.assert_array_equal(got, want)
    assert second.meta["meta_note"].tolist() == [f"n{i}" for i in range(len(values))]
    assert second.outcomes.tolist() == [list(v[:4]) for v in values]


def test_csv_raw_fields_and_header_line_numbers(tmp_path):
    rows = [raw_row(i) for i in range(3)]
    data = oas.read_paired(write_csv(tmp_path / "a.csv", rows))
    np.testing.assert_allclose(
        data.features, oas.read_paired(write_jsonl(tmp_path / "a.jsonl", rows)).features
    )
    rows[2]["y_merge"] = 2
    with pytest.raises(InputError, match=r"a\.csv:4: field 'y_merge'"):  # header is line 1
        oas.read_paired(write_csv(tmp_path / "a.csv", rows))


def test_writer_resumes_after_interruption(tmp_path):
    """PairedWriter: flushed rows survive, a cut last line is dropped, finalize renames atomically."""
    path = tmp_path / "p.jsonl"
    w = oas.PairedWriter(path)
    for i in range(3):
        w.write(raw_row(i))
    w.close()  # interrupted before finalize
    with open(f"{path}.partial", "a") as f:
        f.write('{"instance_id": "i3", "query')  # a crash mid-row
    assert oas.existing_ids(path) == {"i0", "i1", "i2"}
    assert not path.exists()
    with oas.PairedWriter(path) as w:
        assert set(w.ids) == {"i0", "i1", "i2"} and "i1" in w
        with pytest.raises(InputError, match="duplicate 'i1'"):
            w.write(raw_row(1))
        with pytest.raises(InputError, match="field 'budget'"):
            w.write(raw_row(7, budget=0))
        for i in range(3, 6):
            w.write(raw_row(i))
        w.finalize()
    assert not (tmp_path / "p.jsonl.partial").exists()
    assert oas.read_paired(path).instance_id.tolist() == [f"i{i}" for i in range(6)]


def test_csv_writer(tmp_path):
    path = tmp_path / "p.csv"
    with oas.PairedWriter(path) as w:
        w.write(feature_row(0))
    with oas.PairedWriter(path) as w:
        w.write(feature_row(1))
        w.finalize()
    assert oas.read_paired(path).n == 2


def test_prediction_input_may_omit_outcomes(tmp_path):
    rows = [{k: v for k, v in raw_row(i).items() if k not in OUTCOME_COLUMNS} for i in range(2)]
    path = write_jsonl(tmp_path / "a.jsonl", rows)
    assert np.isnan(oas.read_paired(path, outcomes=False).outcomes).all()
    with pytest.raises(InputError, match="missing column 'y_ret'"):
        oas.read_paired(path)


# Every validation rule of docs/paired-data.md, through `retcon fit`: exit 2 and the message.
BAD = {
    "missing column": ([raw_row(0, y_merge=...)], r"bad\.jsonl:1: missing column 'y_merge'"),
    "unknown column": (
        [raw_row(0), raw_row(1, y_merg=0.5)],
        r"bad\.jsonl:2: unknown column 'y_merg'",
    ),
    "NaN": ([raw_row(0), raw_row(1, y_ret=float("nan"))], r"bad\.jsonl:2: field 'y_ret' is NaN"),
    "outcome above 1": (
        [raw_row(0, y_abstract=1.5)],
        r"bad\.jsonl:1: field 'y_abstract' must be in \[0, 1\]; got 1\.5",
    ),
    "outcome below 0": ([raw_row(0, y_rewrite=-0.1)], r"field 'y_rewrite' must be in \[0, 1\]"),
    "unknown query type": (
        [raw_row(0, query_type="temporal-ish")],
        r"bad\.jsonl:1: field 'query_type' must be one of",
    ),
    "two vocabularies": (
        [raw_row(0), raw_row(1, query_type="multi-session")],
        r"bad\.jsonl:2: field 'query_type': 'multi-session' is a longmemeval type",
    ),
    "duplicate id": (
        [raw_row(0), raw_row(1), raw_row(2, instance_id="i1")],
        r"bad\.jsonl:3: field 'instance_id': duplicate 'i1' \(first on line 2\)",
    ),
    "zero budget": (
        [raw_row(0, budget=0)],
        r"bad\.jsonl:1: field 'budget' must be > 0 tokens; got 0",
    ),
    "negative budget": ([raw_row(0, budget=-5)], r"field 'budget' must be > 0 tokens; got -5"),
    "features and raw mixed": ([{**raw_row(0), "token_pressure": 1.0}], r"both features"),
    "partial features": ([feature_row(0, session_count=...)], r"missing column 'session_count'"),
    "ragged lengths": (
        [raw_row(0, session_ids=["a"])],
        r"field 'session_ids' has 1 entries; expected 3",
    ),
    "non-positive length": (
        [raw_row(0, cluster_lengths=[0, 5, 5])],
        r"field 'cluster_lengths' must hold token lengths > 0",
    ),
    "one-hot disagrees": (
        [feature_row(0, query_type_0=0.0, query_type_1=1.0)],
        r"one-hot of query_type",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_file_exits_2_with_message(case, tmp_path, capsys):
    rows, pattern = BAD[case]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    status = main(["fit", "--data", str(path), "--router-out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("retcon fit: error: ")
    assert re.search(pattern, err), err
    assert not (tmp_path / "r.json").exists()


def test_bad_csv_through_cli(tmp_path, capsys):
    rows = [raw_row(0), raw_row(1)]
    path = write_csv(tmp_path / "bad.csv", rows)
    path.write_text(path.read_text().replace("y_rewrite", "y_rewrote"))
    assert main(["fit", "--data", str(path), "--router-out", str(tmp_path / "r.json")]) == 2
    assert "bad.csv:1: missing column 'y_rewrite'" in capsys.readouterr().err


def test_bad_json_line_and_suffix(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(raw_row(0)) + "\n{not json\n")
    assert main(["fit", "--data", str(path), "--router-out", str(tmp_path / "r.json")]) == 2
    assert "bad.jsonl:2: not valid JSON" in capsys.readouterr().err
    assert (
        main(["fit", "--data", str(tmp_path / "x.txt"), "--router-out", str(tmp_path / "r.json")])
        == 2
    )
    assert "no such paired-data file" in capsys.readouterr().err


def test_texts_are_embedded(tmp_path):
    """Rows with texts get embeddings from the default embedder (oas.embed_texts) or embed=."""
    rows = [
        raw_row(
            i,
            embeddings=...,
            texts=[
                "Caroline went to the LGBTQ support group.",
                "Melanie painted a sunrise.",
                "Caroline went again.",
            ],
        )
        for i in range(2)
    ]
    path = write_jsonl(tmp_path / "t.jsonl", rows)

    def embed(texts):
        return np.array([[len(t), t.count("Caroline") + 1.0] for t in texts])

    data = oas.read_paired(path, embed=embed)
    ref = oas.compute_features(
        64, rows[0]["cluster_lengths"], rows[0]["session_ids"], embed(rows[0]["texts"]), 0
    )
    np.testing.assert_allclose(data.features[0], ref)
    assert np.all(np.isfinite(oas.read_paired(path).features))  # default: oas.embed_texts


def test_cluster_tokens_is_stored_not_rebuilt(tmp_path):
    """MODEL §8 / docs/paired-data.md: len(C) is a stored column; raw rows store the sum of their
    lengths, feature rows what they give (NaN without it); raw_grounded is len(C) <= B."""
    rows = [
        raw_row(0),  # 40 + 90 + 25 = 155 tokens, budget 64
        feature_row(1, cluster_tokens=200),  # budget 256: grounded
        feature_row(2),  # no len(C): unknown
        feature_row(3, meta_cluster_tokens=300),  # a file written before the column existed
    ]
    d = oas.read_paired(write_jsonl(tmp_path / "p.jsonl", rows))
    np.testing.assert_array_equal(d.cluster_tokens, [155.0, 200.0, np.nan, 300.0])
    np.testing.assert_array_equal(d.raw_grounded, [0.0, 1.0, np.nan, 0.0])
    sub = d.take(np.array([1, 0]))
    np.testing.assert_array_equal(sub.cluster_tokens, [200.0, 155.0])
    # written back when every row has it, read back unchanged
    both = d.take(np.array([0, 1]))
    out = oas.write_paired(tmp_path / "w.jsonl", both)
    assert json.loads(out.read_text().splitlines()[1])["cluster_tokens"] == 200.0
    np.testing.assert_array_equal(oas.read_paired(out).cluster_tokens, [155.0, 200.0])
    with pytest.raises(InputError, match=r"p2.jsonl:1: field 'cluster_tokens' must be >= 0"):
        oas.read_paired(write_jsonl(tmp_path / "p2.jsonl", [feature_row(0, cluster_tokens=-1)]))
    # 0: the retriever returned none of the cluster (a retrieval miss), which grounds nothing
    empty = oas.read_paired(write_jsonl(tmp_path / "p3.jsonl", [feature_row(0, cluster_tokens=0)]))
    assert empty.cluster_tokens.tolist() == [0.0] and empty.raw_grounded.tolist() == [0.0]


@pytest.mark.slow  # moved to the slow tier: the fast tier measured 184 s on 2 cores
def test_simulated_paired_data_stores_cluster_tokens():
    """Simulated paired data carries len(C) from the instances' record lengths (MODEL §8)."""
    import jax

    from oas._simulate import paired_from_instances
    from tests._toy import toy_instances

    inst = toy_instances(jax.random.key(0), 3, 4, [32, 256, 2048])
    d = paired_from_instances(jax.random.key(1), inst)
    want = np.where(inst.record_mask, inst.record_lengths, 0).sum(1)
    np.testing.assert_array_equal(d.cluster_tokens, want)
    pressure = d.features[:, oas.FEATURE_NAMES.index("token_pressure")]
    np.testing.assert_allclose(np.asarray(d.cluster_tokens), pressure * d.budget, rtol=1e-12)
