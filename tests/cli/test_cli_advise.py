"""``retcon advise``: the answer and the rule first, the same B* as ``retcon crossover --lengths``,
the trigger's scale argument (MODEL §6), measured gains from a paired file, the policy file."""

import json
import math

import numpy as np
import pytest
from scipy import stats

import oas
import retcon.errors as oas_errors
import theory
from tests._cli import run_cli

KW = dict(compress_ratio=0.3, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)


def write_lengths(tmp_path, n=200, seed=0, scale=300.0):
    x = np.round(np.random.default_rng(seed).exponential(scale, size=n), 1) + 1.0
    f = tmp_path / "my-lengths.txt"
    f.write_text("\n".join(f"{v:g}" for v in x) + "\n")
    return f, x


def test_answer_and_rule_first_and_crossover_equals_crossover_command(tmp_path, capsys):
    f, _ = write_lengths(tmp_path)
    rc, out, err = run_cli(["advise", "--lengths", str(f), "--budget", "4096"], capsys)
    assert rc == 0, err
    first, second = out.splitlines()[:2]
    # 4096 tokens is far above this sample's B* (a few hundred tokens): a loose budget
    assert first.startswith("At a 4096-token budget: retain (loose: 4096 >= B* = ")
    assert second.startswith("  Rule: consolidate with merge when the candidate evidence exceeds ")
    assert "retain below." in second
    rc, out, _ = run_cli(["advise", "--lengths", str(f), "--budget", "4096", "--json"], capsys)
    adv = json.loads(out)
    rc2, out2, _ = run_cli(["crossover", "--lengths", str(f), "--json"], capsys)
    assert rc == rc2 == 0
    assert adv["crossover_budget"] == json.loads(out2)["crossover_budget"]
    assert adv["budgets"][0]["action"] == "ret"


def test_tight_budget_consolidates_and_direction_is_the_papers(tmp_path, capsys):
    f, x = write_lengths(tmp_path)
    b_star = theory.crossover(theory.empirical_lengths(x), **KW).crossover_budget
    assert b_star is not None
    tight, loose = round(b_star / 4), round(b_star * 4)
    _rc, out, _ = run_cli(
        ["advise", "--lengths", str(f), "--budget", f"{tight},{loose}", "--json"], capsys
    )
    res = json.loads(out)
    assert [b["action"] for b in res["budgets"]] == ["merge", "ret"]
    tight_row, loose_row = res["budgets"]
    # the model's gain and its interval have the sign of the action
    assert tight_row["gain_interval"][0] > 0 and loose_row["gain_interval"][1] < 0
    assert res["direction"].startswith("consolidate under tight budgets")
    lo, hi = res["crossover_interval"]
    assert lo <= b_star <= hi


def test_trigger_rests_on_scale_equivariance(tmp_path):
    """MODEL §6: dU depends on B only through B/L, so B* of s*L is s*B* (the trigger's basis)."""
    _, x = write_lengths(tmp_path, n=120, seed=4)
    for s in (0.5, 3.0, 17.0):
        b1 = theory.crossover(theory.empirical_lengths(x), **KW).crossover_budget
        bs = theory.crossover(theory.empirical_lengths(s * x), **KW).crossover_budget
        assert b1 is not None and bs is not None
        assert bs == pytest.approx(s * b1, rel=1e-6)
    adv = oas.advise(x, [100.0, 1000.0], window=8192.0, resamples=0)
    med = float(np.median(x))
    for a in adv.budgets:
        assert a.trigger_tokens == pytest.approx(a.budget * med / adv.crossover_budget)
        # the text states N and its share of the window
        rule = oas.advice_rule(adv, a)
        assert f"exceeds {a.trigger_tokens:.0f} tokens" in rule
        assert f"{100 * a.trigger_tokens / 8192:.3g}% of a 8192-token window" in rule


def test_policy_file_loads_and_agrees_with_the_advice(tmp_path, capsys):
    f, x = write_lengths(tmp_path)
    pol = tmp_path / "policy.json"
    budgets = [32, 128, 512, 2048, 8192]
    rc, _out, err = run_cli(
        ["advise", "--lengths", str(f), "--budget", *map(str, budgets), "--policy", str(pol)],
        capsys,
    )
    assert rc == 0, err
    policy = json.loads(pol.read_text())
    assert policy["format"] == "retcon-policy/1"
    assert policy["data"]["lengths_file"]["sha256"]
    assert policy["model"]["compress_ratio"] == 0.3
    adv = oas.advise(x, budgets, resamples=0)
    for a in adv.budgets:
        assert oas.policy_action(policy, a.budget) == a.action
        # the trigger, applied to the sample's median evidence, gives the budget's action
        assert oas.policy_action(policy, a.budget, float(np.median(x)) * (1 + 1e-9)) == a.action


def test_same_seed_same_bytes(tmp_path, capsys):
    f, _ = write_lengths(tmp_path)
    outs = [run_cli(["advise", "--lengths", str(f), "--budget", "300", "--json"], capsys)[1]]
    outs.append(run_cli(["advise", "--lengths", str(f), "--budget", "300", "--json"], capsys)[1])
    assert outs[0] == outs[1]


def _paired_rows(gain_by_budget, groups=5, per=8, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        for q in range(per):
            for b, p in gain_by_budget.items():
                y_ret = float(rng.random() < 0.5)
                y_merge = float(rng.random() < 0.5 + p)
                feats = dict.fromkeys(oas.FEATURE_NAMES, 0.0)
                feats.update(
                    {"budget_over_512": b / 512, "constituent_count": 1.0, "session_count": 1.0}
                )
                feats["mean_pairwise_cosine"] = 1.0
                feats["query_type_1"] = 1.0
                rows.append(
                    {
                        "instance_id": f"g{g}q{q}b{b}",
                        "query_id": f"g{g}q{q}",
                        "group_id": f"g{g}",
                        "query_type": "multi-hop",
                        "budget": b,
                        "y_ret": y_ret,
                        "y_merge": y_merge,
                        "y_abstract": y_ret,
                        "y_rewrite": y_ret,
                        **feats,
                    }
                )
    return rows


def test_paired_file_measures_the_gain_with_a_grouped_interval(tmp_path, capsys):
    rows = _paired_rows({64: 0.4, 4096: -0.4})
    paired = tmp_path / "paired.jsonl"
    oas.write_paired(paired, rows)
    f, _ = write_lengths(tmp_path)
    rc, out, err = run_cli(
        ["advise", "--lengths", str(f), "--budget", "50,5000", "--paired", str(paired), "--json"],
        capsys,
    )
    assert rc == 0, err
    res = json.loads(out)
    for row, grid in zip(res["budgets"], (64, 4096)):
        m = row["measured"]
        assert m["grid_budget"] == grid and m["groups"] == 5
        # independent reference: one mean difference per group, a t interval on G - 1 df
        per_group = []
        for g in range(5):
            sel = [r for r in rows if r["group_id"] == f"g{g}" and r["budget"] == grid]
            per_group.append(np.mean([r["y_merge"] - r["y_ret"] for r in sel]))
        mean, se = np.mean(per_group), np.std(per_group, ddof=1) / math.sqrt(5)
        t = stats.t.ppf(0.975, 4)
        assert m["gain"] == pytest.approx(mean)
        assert m["lower"] == pytest.approx(mean - t * se)
        assert m["upper"] == pytest.approx(mean + t * se)
        assert row["source"] == "paired"
        assert row["action"] == ("merge" if mean > 0 else "ret")
    assert [r["action"] for r in res["budgets"]] == ["merge", "ret"]


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--budget", "0"], "--budget"),
        (["--budget", "100", "--window", "-5"], "--window"),
        (["--budget", "100", "--resamples", "-1"], "--resamples"),
        (["--budget", "100", "--resamples", "1000000"], "--resamples must be in [0, 10000]"),
        (["--budget", "abc"], "--budget"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, argv, needle):
    f, _ = write_lengths(tmp_path)
    rc, out, err = run_cli(["advise", "--lengths", str(f), *argv], capsys)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err


def test_missing_lengths_file_is_one_line(tmp_path, capsys):
    rc, _, err = run_cli(["advise", "--lengths", str(tmp_path / "no.txt"), "--budget", "1"], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "--lengths" in err


def test_docs_memory_loop_applies_the_policy(tmp_path, capsys):
    """docs/advise.md's 20-line loop, run as written, takes the action oas.policy_action gives."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "advise.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(code.strip().splitlines()) <= 22
    ns: dict = {}
    exec(compile(code, "docs/advise.md", "exec"), ns)
    f, x = write_lengths(tmp_path)
    pol = tmp_path / "policy.json"
    assert (
        run_cli(["advise", "--lengths", str(f), "--budget", "300", "--policy", str(pol)], capsys)[0]
        == 0
    )
    policy = json.loads(pol.read_text())
    queries = [[float(v)] for v in x[:60]]  # each query's evidence: one record of that length
    shares = []
    for budget in (40.0, 300.0, 3000.0):
        got = list(
            ns["run_memory_loop"](
                pol,
                queries,
                budget,
                retrieve=lambda q: q,
                count_tokens=lambda r: r,
                consolidate=lambda rs, how: sum(rs) * 0.3,
                answer=lambda q, rs, b: rs,
            )
        )
        for (_q, act, _), ev in zip(got, queries):
            assert act == oas.policy_action(policy, budget, ev[0])
        shares.append(np.mean([a != "ret" for _, a, _ in got]))
    # the paper's direction: the tighter the budget, the more queries consolidate
    assert shares[0] > shares[1] > shares[2]


def test_router_theory_block_gives_the_model(tmp_path, capsys):
    """g, a_t, phi_{o,t} planted in a TheoryRouter come back as MODEL §6's parameters, phi by
    a phi_6 = g + (a - g) phi_2 (MODEL §6, parametrization note)."""
    from scipy.special import logit

    g, a_t = 0.1, np.array([0.8, 0.9, 0.7, 0.6])
    phi2 = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.5, 0.5, 0.5], [1.0, 1.0, 0.9, 0.9]])
    rho = np.array([[0.3, 0.2, 0.4, 0.3], [0.1, 0.1, 0.1, 0.1], [0.6, 0.6, 0.6, 0.6]])
    theta = np.concatenate([[logit(g)], logit((a_t - g) / (1 - g)), np.log(phi2).ravel()])
    tr = oas.TheoryRouter(theta, rho)
    got = oas.model_from_router(tr, "merge")
    a = a_t.mean()
    assert got["acc_guess"] == pytest.approx(g) and got["acc_raw"] == pytest.approx(a)
    assert got["compress_ratio"] == pytest.approx(0.3)
    assert got["fidelity"] == pytest.approx((g + (a - g) * 0.75) / a)
    assert oas.model_from_router(tr, "abstract")["compress_ratio"] == pytest.approx(0.1)
    with pytest.raises(oas_errors.InputError, match="no theory block"):
        oas.model_from_router(None)
