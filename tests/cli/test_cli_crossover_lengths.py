"""``retcon crossover --lengths FILE``: the answer first, the same B* as ``theory``, bad files."""

import json

import numpy as np
import pytest

import theory
from retcon.cli import main

KW = dict(compress_ratio=0.3, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
# 12 lengths whose step CDF makes dU cross zero three times (status multiple, docs/model.md §6.7)
MULTIPLE = [198, 69, 81, 5, 2208, 827, 92, 475, 227, 66, 644, 94]


def sample(n=200, seed=0):
    return np.round(np.random.default_rng(seed).exponential(300.0, size=n), 1) + 1.0


def run_json(capsys, *argv):
    assert main(["crossover", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("form", ["lines", "json", "csv"])
def test_lengths_file_matches_theory(tmp_path, capsys, form):
    x = sample()
    f = tmp_path / "lengths.txt"
    extra = []
    if form == "lines":
        f.write_text("\n".join(repr(float(v)) for v in x) + "\n")
    elif form == "json":
        f.write_text(json.dumps([float(v) for v in x]))
    else:
        f.write_text("id,tokens\n" + "".join(f"{i},{v!r}\n" for i, v in enumerate(x.tolist())))
        extra = ["--lengths-column", "tokens"]
    res = run_json(capsys, "--lengths", str(f), *extra)
    want = theory.crossover(theory.empirical_lengths(x), **KW)
    assert res["status"] == want.status
    assert res["crossover_budget"] == want.crossover_budget
    assert res["dist"]["name"] == "empirical" and res["dist"]["params"] == {"n": x.size}


def test_answer_first_says_who_wins(capsys):
    assert main(["crossover"]) == 0
    first = capsys.readouterr().out.splitlines()[:5]
    line = next(s for s in first if s.startswith("Answer:"))
    b = theory.crossover(theory.make_length_dist("exponential", mean=300.0), **KW).crossover_budget
    assert f"B* = {b:.4g}" in line
    assert line.index("consolidating") < line.index("above it") < line.index("retaining")


def test_multiple_explained(tmp_path, capsys):
    f = tmp_path / "l.txt"
    f.write_text("\n".join(map(str, MULTIPLE)))
    want = theory.crossover(theory.empirical_lengths(MULTIPLE), **KW)
    assert want.status == "multiple"
    assert main(["crossover", "--lengths", str(f)]) == 0
    head = "\n".join(capsys.readouterr().out.splitlines()[:5])
    assert "status multiple" in head and "step CDF" in head and "§6.7" in head
    assert f"B* = {want.crossover_budget:.4g}" in head


@pytest.mark.parametrize(
    "content, extra, needle",
    [
        ("12\nabc\n", [], "line 2"),
        ("12\n-3\n", [], "line 2"),
        ('[1, "x"]', [], "JSON list"),
        ("", [], "at least one"),
        ("a,b\n1,2\n", ["--lengths-column", "tokens"], "'tokens'"),
        ("a,b\n1,\n", ["--lengths-column", "b"], "row 2"),
        ("12\n", ["--mean", "3"], "--mean"),
    ],
)
def test_bad_lengths_file(tmp_path, capsys, content, extra, needle):
    f = tmp_path / "l.txt"
    f.write_text(content)
    assert main(["crossover", "--lengths", str(f), *extra]) == 2
    err = capsys.readouterr().err
    assert needle in err and "--lengths" in err
    assert err.count("\n") == 1


def test_missing_lengths_file(tmp_path, capsys):
    assert main(["crossover", "--lengths", str(tmp_path / "nope.txt")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_column_needs_lengths(capsys):
    assert main(["crossover", "--lengths-column", "x"]) == 2
    assert "--lengths" in capsys.readouterr().err
