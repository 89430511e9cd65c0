"""``retcon pair import``: per-sample logs (nested JSONL, CSV, Inspect eval logs made by Inspect's
own writer) become paired rows whose ``paper-checks --paired`` verdicts equal those of the same
rows given directly; missing, ambiguous and unpaired fields are one line (MODEL §8)."""

import csv
import json
import os
import sys

import numpy as np
import pytest

import oas
from retcon.vocab import ACTIONS, VOCABULARIES
from tests._cli import run_cli

BUDGETS = (16, 64, 256, 1024)
TYPES = VOCABULARIES["locomo"]


def outcomes(groups=6, per=5, seed=0):
    """Per (group, question, budget): the four outcomes, with consolidation winning at small
    budgets and retention at large ones (so the verdicts are not all INCONCLUSIVE)."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(groups):
        for q in range(per):
            qt = TYPES[(g + q) % 4]
            for b in BUDGETS:
                p_ret = 1.0 / (1.0 + np.exp(-np.log(b / 120.0) * 2))
                p_op = 0.55
                y = {"ret": float(rng.random() < p_ret)}
                for a in ACTIONS[1:]:
                    y[a] = float(rng.random() < p_op)
                out.append((f"conv{g}", f"conv{g}-q{q}", qt, b, y))
    return out


def direct_rows(cells):
    """The paired rows docs/import.md says an import without lengths gives: the budget and the
    type real, the cluster features the documented placeholders."""
    rows = []
    for g, q, qt, b, y in cells:
        slot = TYPES.index(qt)
        row = {
            "instance_id": f"{q}@{b}",
            "query_id": q,
            "group_id": g,
            "query_type": qt,
            "budget": float(b),
            **{f"y_{a}": y[a] for a in ACTIONS},
            "budget_over_512": b / 512,
            "token_pressure": 0.0,
            "budget_fit_fraction": 1.0,
            "constituent_count": 1.0,
            "session_count": 1.0,
            "embedding_inconsistency": 0.0,
            "mean_pairwise_cosine": 1.0,
            **{f"query_type_{k}": float(k == slot) for k in range(4)},
        }
        rows.append(row)
    return rows


def nested_records(cells):
    recs = []
    for g, q, qt, b, y in cells:
        for a in ACTIONS:
            recs.append(
                {
                    "sample": {"conversation": g, "qid": q, "kind": qt},
                    "config": {"memory": {"budget": b, "operator": a}},
                    "scores": [{"name": "judge", "value": y[a] == 1.0}],
                }
            )
    return recs


NESTED_MAP = (
    "group=sample.conversation,question=sample.qid,budget=config.memory.budget,"
    "action=config.memory.operator,correct=scores.0.value,query_type=sample.kind"
)


def verdicts(path, capsys, claims="1,2,3"):
    rc, out, err = run_cli(
        ["paper-checks", "--paired", str(path), "--claims", claims, "--no-figures", "--json", "-q"],
        capsys,
    )
    assert rc == 0, err
    return json.loads(out)["verdicts"]


def strip_meta(rows):
    return [{k: v for k, v in r.items() if not k.startswith("meta_")} for r in rows]


def read_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_nested_jsonl_imports_to_the_same_rows_and_verdicts(tmp_path, capsys):
    cells = outcomes()
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in nested_records(cells)))
    out = tmp_path / "imported.jsonl"
    rc, text, err = run_cli(
        ["pair", "import", str(log), "--map", NESTED_MAP, "--output", str(out)], capsys
    )
    assert rc == 0, err
    assert text.startswith(
        "wrote 120 paired rows (30 questions, 6 groups, budgets 16, 64, 256, 1024)"
    )
    direct = tmp_path / "direct.jsonl"
    oas.write_paired(direct, direct_rows(cells))
    key = lambda r: r["instance_id"]  # noqa: E731
    assert sorted(strip_meta(read_rows(out)), key=key) == sorted(read_rows(direct), key=key)
    assert all(r["meta_cluster_features"] == "placeholder" for r in read_rows(out))
    v_direct = verdicts(direct, capsys)
    assert v_direct == verdicts(out, capsys)
    assert set(v_direct.values()) - {"INCONCLUSIVE"}, v_direct  # something was decided


def test_csv_imports_with_a_map_and_action_names(tmp_path, capsys):
    cells = outcomes(groups=3, per=2)
    log = tmp_path / "log.csv"
    names = {"ret": "raw", "merge": "merged", "abstract": "abstract", "rewrite": "rewritten"}
    with log.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["conv", "question", "budget", "arm", "is_correct", "cluster_lengths"])
        for g, q, _, b, y in cells:
            for a in ACTIONS:
                w.writerow([g, q, b, names[a], "true" if y[a] else "false", "[100, 300]"])
    out = tmp_path / "imported.csv"
    rc, _, err = run_cli(
        [
            "pair", "import", str(log), "--output", str(out),
            "--map", "group=conv,question=question,budget=budget,action=arm,correct=is_correct,"
            "lengths=cluster_lengths",
            "--action-names", ",".join(f"{v}={k}" for k, v in names.items()),
        ],
        capsys,
    )  # fmt: skip
    assert rc == 0, err
    data = oas.read_paired(out)
    assert data.outcomes.shape == (len(cells), 4)
    got = {
        (str(q), float(b)): tuple(y) for q, b, y in zip(data.query_id, data.budget, data.outcomes)
    }
    for _, q, _, b, y in cells:
        assert got[(q, float(b))] == tuple(y[a] for a in ACTIONS)
    # the mapped lengths give the length features: 400 tokens over the budget, two records
    i = list(data.budget).index(16.0)
    assert data.cluster_tokens is not None and data.cluster_tokens[i] == 400.0
    assert data.features[i, 1] == pytest.approx(400.0 / 16.0)
    assert data.features[i, 3] == 2.0


def test_missing_field_is_one_line_naming_the_keys_found(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in nested_records(outcomes(1, 1))))
    bad = NESTED_MAP.replace("config.memory.budget", "config.memory.tokens")
    rc, out, err = run_cli(
        ["pair", "import", str(log), "--map", bad, "--output", str(tmp_path / "o.jsonl")], capsys
    )
    assert rc == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "line 1" in line and "'budget'" in line and "'tokens'" in line
    assert "keys found ['budget', 'operator']" in line
    rc, _, err = run_cli(
        [
            "pair",
            "import",
            str(log),
            "--map",
            "group=sample.conversation",
            "--output",
            str(tmp_path / "o.jsonl"),
        ],
        capsys,
    )
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "'question' is not mapped" in err


def test_unpaired_rows_are_refused_naming_the_first_few(tmp_path, capsys):
    recs = nested_records(outcomes(2, 3))
    # drop merge for two (question, budget) pairs and abstract for one more
    drop = {(0, "merge"), (9, "merge"), (21, "abstract")}
    kept = [
        r for i, r in enumerate(recs) if (i // 4, r["config"]["memory"]["operator"]) not in drop
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in kept))
    rc, _, err = run_cli(
        ["pair", "import", str(log), "--map", NESTED_MAP, "--output", str(tmp_path / "o.jsonl")],
        capsys,
    )
    assert rc == 2
    (line,) = err.strip().splitlines()
    assert "3 of 24 (question, budget) pairs do not pair" in line
    assert "question 'conv0-q0' at budget 16 lacks merge" in line


def test_repeats_refused_or_averaged(tmp_path, capsys):
    recs = nested_records(outcomes(1, 1))
    again = json.loads(json.dumps(recs[0]))
    again["scores"][0]["value"] = not again["scores"][0]["value"]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in recs + [again]))
    o = tmp_path / "o.jsonl"
    rc, _, err = run_cli(
        ["pair", "import", str(log), "--map", NESTED_MAP, "--output", str(o)], capsys
    )
    assert rc == 2 and "--repeats mean" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run_cli(
        ["pair", "import", str(log), "--map", NESTED_MAP, "--output", str(o), "--repeats", "mean"],
        capsys,
    )
    assert rc == 0, err
    row = next(r for r in read_rows(o) if r["instance_id"] == "conv0-q0@16")
    assert row["y_ret"] == 0.5


def test_resolve_star_is_ambiguous_with_two_keys():
    with pytest.raises(KeyError, match=r"ambiguous at scores: keys found \['a', 'b'\]"):
        oas._import.resolve({"scores": {"a": 1, "b": 0}}, "scores.*.value")
    assert oas._import.resolve({"scores": {"a": {"value": 1}}}, "scores.*.value") == 1


def _inspect_log(tmp_path, cells, *, scorers=1, epochs=1):
    """An Inspect eval log written by Inspect itself: ``eval()`` of a task whose solver leaves the
    state as it is (no model call) and whose scorer returns each sample's planted outcome."""
    try:
        import inspect_ai
    except ImportError:
        why = "inspect-ai is not installed (pip install 'retcon[inspect]')"
        if os.environ.get("RETCON_REQUIRE_INSPECT") == "1":
            pytest.fail(f"RETCON_REQUIRE_INSPECT=1 but {why}")
        pytest.skip(why)
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
    from inspect_ai.solver import solver

    @solver
    def keep():
        async def solve(state, generate):
            return state

        return solve

    def make_scorer(name):
        @scorer(metrics=[accuracy()], name=name)
        def planted():
            async def score(state, target):
                return Score(value=CORRECT if state.metadata["y"] else INCORRECT)

            return score

        return planted()

    samples = [
        Sample(
            input=f"question {q}",
            target="answer",
            id=f"{q}|{b}|{a}",
            metadata={
                "group": g,
                "question": q,
                "budget": b,
                "action": a,
                "query_type": qt,
                "y": y[a] == 1.0,
            },
        )
        for g, q, qt, b, y in cells
        for a in ACTIONS
    ]
    task = inspect_ai.Task(
        dataset=samples,
        solver=keep(),
        scorer=[make_scorer(f"s{i}") for i in range(scorers)],
        epochs=epochs,
    )
    (log,) = inspect_ai.eval(
        task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success"
    return log.location


@pytest.mark.slow  # Inspect runs an eval; CI installs the inspect extra for the slow tier
def test_inspect_log_from_inspects_writer_gives_the_direct_verdicts(tmp_path, capsys):
    cells = outcomes(groups=4, per=3)
    path = _inspect_log(tmp_path, cells)
    out = tmp_path / "imported.jsonl"
    rc, _, err = run_cli(
        ["pair", "import", str(path), "--from", "inspect", "--output", str(out)], capsys
    )
    assert rc == 0, err
    direct = tmp_path / "direct.jsonl"
    oas.write_paired(direct, direct_rows(cells))
    key = lambda r: r["instance_id"]  # noqa: E731
    assert sorted(strip_meta(read_rows(out)), key=key) == sorted(read_rows(direct), key=key)
    assert verdicts(out, capsys) == verdicts(direct, capsys)


@pytest.mark.slow  # Inspect runs an eval; CI installs the inspect extra for the slow tier
def test_inspect_two_scorers_is_ambiguous_and_a_map_picks_one(tmp_path, capsys):
    cells = outcomes(groups=1, per=1)
    path = _inspect_log(tmp_path, cells, scorers=2)
    out = tmp_path / "o.jsonl"
    rc, _, err = run_cli(
        ["pair", "import", str(path), "--from", "inspect", "--output", str(out)], capsys
    )
    assert rc == 2
    (line,) = err.strip().splitlines()
    assert "ambiguous" in line and "keys found ['s0', 's1']" in line
    rc, _, err = run_cli(
        [
            "pair",
            "import",
            str(path),
            "--from",
            "inspect",
            "--map",
            "correct=scores.s1.value",
            "--output",
            str(out),
        ],
        capsys,
    )
    assert rc == 0, err


@pytest.mark.slow
def test_nested_jsonl_every_claim_same_verdicts(tmp_path, capsys):
    cells = outcomes(groups=8, per=6, seed=3)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in nested_records(cells)))
    out = tmp_path / "imported.jsonl"
    assert (
        run_cli(["pair", "import", str(log), "--map", NESTED_MAP, "--output", str(out)], capsys)[0]
        == 0
    )
    direct = tmp_path / "direct.jsonl"
    oas.write_paired(direct, direct_rows(cells))
    every = "1,2,3,5,6,7,8,9"
    assert verdicts(out, capsys, every) == verdicts(direct, capsys, every)


def aggregate_of(samples):
    """EEE's layout: ``UUID.json`` beside ``UUID_samples.jsonl``."""
    return samples.with_name(samples.name.removesuffix("_samples.jsonl") + ".json")


def _export(tmp_path, capsys, cells):
    paired = tmp_path / "mine.jsonl"
    oas.write_paired(paired, direct_rows(cells))
    folder = tmp_path / "eee"
    argv = ["paper-checks", "--paired", str(paired), "--claims", "1,2,3", "--no-figures"]
    rc, _, err = run_cli([*argv, "--json", "-q", "--export", "eee", str(folder)], capsys)
    assert rc == 0, err
    return paired, folder


def test_eee_export_round_trips_through_pair_import(tmp_path, capsys):
    cells = outcomes(groups=5, per=3, seed=2)
    paired, folder = _export(tmp_path, capsys, cells)
    (samples,) = folder.glob("data/retcon-paired/unknown/mine/*_samples.jsonl")
    records = read_rows(samples)
    assert len(records) == 4 * len(cells)
    aggregate = json.loads(aggregate_of(samples).read_text())
    assert aggregate["detailed_evaluation_results"]["file_path"] == str(samples.relative_to(folder))
    back = tmp_path / "back.jsonl"
    rc, _, err = run_cli(
        ["pair", "import", str(samples), "--from", "eee", "--output", str(back)], capsys
    )
    assert rc == 0, err
    # the same rows: ids, groups, types, budgets and the four outcomes
    assert strip_meta(read_rows(back)) == read_rows(paired)
    # the reader's name seeds the resamples: give the imported file the original's
    rc, out, _ = run_cli(
        [
            "paper-checks",
            "--paired",
            str(back),
            "--reader-name",
            "mine",
            "--claims",
            "1,2,3",
            "--no-figures",
            "--json",
            "-q",
        ],
        capsys,
    )
    v_back = json.loads(out)["verdicts"]
    assert v_back == verdicts(paired, capsys)
    # the aggregate carries each verdict on EEE's levels scale
    levels = {"FAIL": 0.0, "PARTIAL": 1.0, "PASS": 2.0}
    for r in aggregate["evaluation_results"]:
        cid = r["evaluation_result_id"].removeprefix("claim-")
        assert r["score_details"]["details"]["verdict"] == v_back[cid]
        assert r["score_details"]["score"] == levels.get(v_back[cid], -1.0)


def test_export_needs_paired_and_a_known_format(tmp_path, capsys):
    rc, _, err = run_cli(
        ["paper-checks", "--sim-only", "--export", "eee", str(tmp_path / "x")], capsys
    )
    assert rc == 2 and "--paired" in err and len(err.strip().splitlines()) == 1
    paired = tmp_path / "p.jsonl"
    oas.write_paired(paired, direct_rows(outcomes(2, 1)))
    rc, _, err = run_cli(
        ["paper-checks", "--paired", str(paired), "--export", "csv", str(tmp_path / "x")], capsys
    )
    assert rc == 2 and "--export" in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(
    sys.version_info < (3, 12),
    reason="every-eval-ever (its schemas and validator) needs Python >= 3.12; this is "
    f"{sys.version_info.major}.{sys.version_info.minor}",
)
def test_eee_export_validates_against_every_eval_evers_schemas(tmp_path, capsys):
    eee = pytest.importorskip("every_eval_ever", reason="every-eval-ever is not installed")
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")
    from importlib import resources

    schemas = resources.files(eee) / "schemas"
    instance = json.loads((schemas / "instance_level_eval.schema.json").read_text())
    aggregate = json.loads((schemas / "eval.schema.json").read_text())
    _, folder = _export(tmp_path, capsys, outcomes(groups=3, per=2))
    (samples,) = folder.glob("data/*/*/*/*_samples.jsonl")
    for rec in read_rows(samples):
        jsonschema.validate(rec, instance)
    agg = json.loads(aggregate_of(samples).read_text())
    jsonschema.validate(agg, aggregate)
