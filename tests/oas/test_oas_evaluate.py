"""Evaluation and the CLI end to end (MODEL §8): `pair simulate` -> `fit` -> `evaluate` -> `predict`,
metric invariants, the MLP control."""

import json
import types

import jax
import numpy as np
import pytest

import oas
from oas._evaluate import METRICS, POLICIES, evaluate, evaluation_json
from oas._mlp import WEIGHT_DECAYS, WIDTHS, fit_mlp, predict_mlp
from oas._simulate import paired_from_instances
from retcon.cli import main
from tests._toy import toy_instances

BUDGETS = [64, 128, 256, 512]


@pytest.fixture(scope="module")
def toy():
    return paired_from_instances(
        jax.random.key(1), toy_instances(jax.random.key(0), 30, 8, BUDGETS)
    )


@pytest.fixture(scope="module")
def ev(toy):
    return evaluate(
        jax.random.key(3),
        toy,
        alpha=0.1,
        n_folds=3,
        n_resamples=300,
        mlp_options={"max_epochs": 300, "patience": 30},
    )


def test_interval_contains_point_and_metric_identities(ev, toy):
    """CIs bracket the estimate; gain = accuracy - accuracy(always-ret); regret = oracle - accuracy;
    always-ret has zero harm and zero consolidation; the oracle's accuracy bounds every policy."""
    ok = np.isfinite(ev.point)
    assert np.all(ev.lower[ok] <= ev.point[ok] + 1e-6) and np.all(
        ev.point[ok] <= ev.upper[ok] + 1e-6
    )
    acc, gain, regret = (ev.point[:, METRICS.index(m)] for m in ("accuracy", "gain", "regret"))
    ret, oracle = POLICIES.index("always-ret"), POLICIES.index("oracle")
    np.testing.assert_allclose(gain, acc - acc[ret], atol=1e-6)  # float32 point estimates
    np.testing.assert_allclose(regret, acc[oracle] - acc, atol=1e-6)
    assert np.all(acc <= acc[oracle] + 1e-6)
    assert np.all(ev.point[ret, METRICS.index("harm_rate")] == 0)
    assert np.all(ev.point[ret, METRICS.index("consolidation_rate")] == 0)
    best = POLICIES.index("best-fixed")
    np.testing.assert_allclose(ev.diff_point[0], acc[POLICIES.index("oas")] - acc[best], atol=1e-6)


def test_test_groups_are_held_out(ev, toy):
    assert ev.info["n_train"] + ev.info["n_calibration"] + ev.info["n_test"] == toy.n
    assert ev.n_test[-1] == ev.info["n_test"] == ev.choices.shape[1]
    test = toy.take(ev.info["test_index"])
    rest = np.setdiff1d(np.arange(toy.n), ev.info["test_index"])
    assert not set(test.group_id) & set(toy.group_id[rest])
    oracle = ev.choices[POLICIES.index("oracle")]
    np.testing.assert_array_equal(
        test.outcomes[np.arange(test.n), oracle], test.outcomes.max(axis=1)
    )


def test_oas_beats_fixed_policies_when_budgets_are_tight(ev):
    """The crossover scenario: at the tightest budgets OAS is at least as accurate as every fixed
    policy (MODEL §6, §8)."""
    acc = ev.point[:, 0, :2]  # the two tightest budgets
    oas_acc = acc[POLICIES.index("oas")]
    for name in ("always-ret", "always-merge", "always-abstract", "always-rewrite"):
        assert np.all(oas_acc >= acc[POLICIES.index(name)] - 0.02), name


def test_json_layout(ev):
    obj = evaluation_json(ev)
    # the theory router joins when the data carry evidence_structure (docs/identify.md)
    assert set(obj["policies"]) == set(POLICIES) | {"theory"}
    entry = obj["policies"]["oas-crc"]
    for k in ("accuracy", "accuracy_ci", "harm_rate", "consolidation_rate", "per_budget"):
        assert k in entry
    assert set(entry["per_budget"]) == {f"{b:g}" for b in BUDGETS}
    assert "oas - best-fixed" in obj["differences"]
    json.dumps(obj, allow_nan=False)


def test_mlp_early_stopping_learns_the_utilities(toy):
    """MODEL §8, the paper's MLP control: sigmoid outputs in (0, 1); the chosen (width, decay) is
    the grid point of the lowest inner-CV log-loss, which beats the constant predictor's; the
    refit runs the chosen point's mean stopping epoch, below max_epochs."""
    fit = fit_mlp(
        jax.random.key(0), toy.features, toy.outcomes, toy.group_id, max_epochs=400, patience=20
    )
    pred = predict_mlp(fit, toy.features)
    assert pred.shape == (toy.n, 4) and np.all((pred > 0) & (pred < 1))
    assert fit.cv_loss.shape == (len(WIDTHS), len(WEIGHT_DECAYS))
    i, j = np.unravel_index(np.argmin(fit.cv_loss), fit.cv_loss.shape)
    assert (fit.width, fit.weight_decay) == (WIDTHS[i], WEIGHT_DECAYS[j])
    assert fit.val_loss == fit.cv_loss.min()
    m = np.clip(toy.outcomes.mean(0), 1e-6, 1 - 1e-6)
    const = -np.mean(toy.outcomes * np.log(m) + (1 - toy.outcomes) * np.log(1 - m))
    assert fit.val_loss < const
    assert 0 < fit.epochs <= 400
    (w1, b1), (w2, b2) = fit.params
    assert w1.shape == (toy.features.shape[1], fit.width) and b1.shape == (fit.width,)
    assert w2.shape == (fit.width, 4) and b2.shape == (4,)
    again = fit_mlp(
        jax.random.key(0), toy.features, toy.outcomes, toy.group_id, max_epochs=400, patience=20
    )
    np.testing.assert_array_equal(predict_mlp(again, toy.features), pred)  # same key, same bytes


def test_mlp_trainer_compiles_once_for_other_rows_widths_and_decays(toy):
    """Issue 34 (MODEL §8 MLP control): one jitted trainer serves every grid point, inner fold and
    call. A second fit with another row count (the same bucket), other widths and decays (a grid
    of the same size), another patience and learning rate traces nothing new; the first traces
    at most once (every grid batch and the refit share one shape), as ``jax.jit``'s cache
    counts."""
    from oas._identify import row_bucket as _bucket
    from oas._mlp import _train

    n = toy.n
    assert _bucket(n) == _bucket(n - 7) and _bucket(n) >= n
    before = _train._cache_size()  # pyright: ignore[reportAttributeAccessIssue]
    fit_mlp(jax.random.key(1), toy.features, toy.outcomes, toy.group_id, max_epochs=50)
    first = _train._cache_size()  # pyright: ignore[reportAttributeAccessIssue]
    assert first - before <= 1
    rows = np.arange(7, n)
    fit = fit_mlp(
        jax.random.key(2),
        toy.features[rows],
        toy.outcomes[rows],
        toy.group_id[rows],
        widths=(3, 5, 7),
        weight_decays=(0.0, 0.05, 0.2),
        max_epochs=60,
        patience=7,
        learning_rate=0.01,
    )
    assert fit.width in (3, 5, 7) and fit.weight_decay in (0.0, 0.05, 0.2)
    assert _train._cache_size() == first  # pyright: ignore[reportAttributeAccessIssue]


def test_mlp_width_mask_is_a_narrower_network():
    """MODEL §8's widths 4 / 8 / 16 as one padded network: with the mask, the units past the width
    change nothing, whatever their weights; the logits equal a float64 numpy network of that width
    (as ``predict_mlp`` computes)."""
    from oas._mlp import HIDDEN_MAX, _logits, _masks

    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 50))  # (p, N), rows last
    w1, b1 = rng.normal(size=(5, HIDDEN_MAX)), rng.normal(size=HIDDEN_MAX)
    w2, b2 = rng.normal(size=(HIDDEN_MAX, 4)), rng.normal(size=4)
    for width in (4, 8, 16):
        params = tuple(jax.numpy.asarray(a, jax.numpy.float32) for a in (w1, b1, w2, b2))
        got = np.asarray(_logits(params, jax.numpy.asarray(x, jax.numpy.float32),
                                 jax.numpy.asarray(_masks([width])[0])))  # fmt: skip
        h = np.maximum(x.T @ w1[:, :width] + b1[:width], 0.0)
        np.testing.assert_allclose(got.T, h @ w2[:width] + b2, rtol=1e-4, atol=1e-4)


def test_mlp_bucket_bounds_the_padding():
    """Rows pad to at most a third more (from 64 up), never fewer than given, monotone."""
    from oas._identify import row_bucket as _bucket

    sizes = [_bucket(n) for n in range(1, 5000)]
    assert all(s >= n for n, s in zip(range(1, 5000), sizes, strict=True))
    assert all(s <= max(64, 1.5 * n) for n, s in zip(range(1, 5000), sizes, strict=True))
    assert sizes == sorted(sizes) and len(set(sizes)) < 20


def test_mlp_refuses_bad_input(toy):
    """Outcomes outside the sigmoid's [0, 1], a single group and a width above 16 are refused,
    each message naming the argument."""
    from retcon.errors import InputError

    x, y, g = toy.features, toy.outcomes, toy.group_id
    with pytest.raises(InputError, match=r"outcomes must lie in \[0, 1\]"):
        fit_mlp(jax.random.key(0), x, y * 2 - 0.5, g)
    with pytest.raises(InputError, match="at least 2 distinct labels"):
        fit_mlp(jax.random.key(0), x, y, np.zeros(len(g)))
    with pytest.raises(InputError, match="widths must be in 1..16"):
        fit_mlp(jax.random.key(0), x, y, g, widths=(32,))


@pytest.fixture
def fake_sim(monkeypatch):
    """A stand-in for sim's API (load_scenario, simulate_instances) so the CLI is tested alone."""
    import sim

    def load_scenario(name):
        if name != "toy":
            from retcon.errors import InputError

            raise InputError(f"unknown scenario {name!r}")
        return types.SimpleNamespace(name="toy", vocabulary="locomo", packing="prefix")

    def simulate_instances(key, scenario, n_instances, budgets=None):
        grid = BUDGETS if budgets is None else list(budgets)
        inst = toy_instances(key, 30, 8, grid)
        return type(inst)(*(None if v is None else np.asarray(v)[:n_instances] for v in inst))

    monkeypatch.setattr(sim, "load_scenario", load_scenario, raising=False)
    monkeypatch.setattr(sim, "simulate_instances", simulate_instances, raising=False)


@pytest.mark.slow  # moved to the slow tier: the fast tier measured 184 s on 2 cores
def test_cli_end_to_end(fake_sim, tmp_path, capsys):
    data = tmp_path / "paired.jsonl"
    assert (
        main(
            [
                "pair",
                "simulate",
                "--scenario",
                "toy",
                "--instances",
                "960",
                "--output",
                str(data),
                "--seed",
                "1",
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 960 and oas.read_paired(data).n == 960
    router = tmp_path / "router.json"
    assert (
        main(
            ["fit", "--data", str(data), "--router-out", str(router), "--folds", "3", "--seed", "2"]
        )
        == 0
    )
    printed = capsys.readouterr().out
    # fit reports what used to be only in the JSON: penalties, tau_B range, calibration harm
    assert "ridge penalty per action: ret " in printed and "tau_B (calibrated): " in printed
    assert "calibration harm (worst budget) vs alpha 0.1: calibrated " in printed
    assert oas.load_router(router).provenance["command"] == "retcon fit"
    out = tmp_path / "ev"
    evaluate_argv = ["evaluate", "--data", str(data), "--router", str(router), "--out", str(out)]
    evaluate_argv += ["--json", "--resamples", "100", "--folds", "3"]
    # the router was fitted on this very file: its test groups are in-sample, refused by default
    assert main(evaluate_argv) == 2
    err = capsys.readouterr().err
    assert "were used to fit the router" in err and "--allow-overlap" in err
    assert not out.exists()
    assert main([*evaluate_argv, "--allow-overlap"]) == 0
    captured = capsys.readouterr()
    assert "warning: " in captured.err and "in-sample" in captured.err
    obj = json.loads(captured.out)  # exactly one JSON object on stdout
    overlap = obj["info"]["router_overlap"]
    assert overlap["checked"] and overlap["train"] + overlap["calibration"] == overlap["groups"]
    assert obj["policies"]["oas"]["accuracy_ci"][0] <= obj["policies"]["oas"]["accuracy"]
    assert (out / "accuracy_by_budget.png").stat().st_size > 0 and (out / "evaluation.md").exists()
    side = json.loads((out / "sidecar.json").read_text())  # the sidecar of every --out set
    assert side["seed"] == 0 and side["command"] == "retcon evaluate"
    assert set(side["files_sha256"]) >= {"evaluation.json", "evaluation.md"}
    assert "sidecar" not in json.loads((out / "evaluation.json").read_text())
    pred = tmp_path / "pred.csv"
    predict_argv = ["predict", "--router", str(router), "--data", str(data)]
    predict_argv += ["--decisions", str(pred)]
    assert main(predict_argv) == 2 and "were used to fit" in capsys.readouterr().err
    assert main([*predict_argv, "--allow-overlap"]) == 0
    assert (
        pred.read_text().splitlines()[0].startswith("instance_id,query_id,group_id,budget,mu_ret")
    )


@pytest.mark.parametrize(
    "scenario, instances, output, message",
    [
        ("nope", "5", "a.jsonl", "unknown scenario 'nope'"),
        ("toy", "0", "a.jsonl", "--instances must be an integer >= 1"),
        ("toy", "5", "a.txt", "unknown paired-data format '.txt'"),
    ],
)
def test_cli_bad_options(fake_sim, tmp_path, capsys, scenario, instances, output, message):
    argv = ["pair", "simulate", "--scenario", scenario, "--instances", instances]
    assert main([*argv, "--output", str(tmp_path / output)]) == 2
    assert message in capsys.readouterr().err


def test_interval_is_the_t_interval_of_test_group_means(ev, toy):
    """docs/statistics.md (few groups): every metric is averaged within each test group first, then
    over groups, with the Student-t interval on G - 1 df. Recomputed here by hand from the chosen
    actions: accuracy of `oas` overall."""
    from scipy import stats

    test = toy.take(ev.info["test_index"])
    p = POLICIES.index("oas")
    acc = test.outcomes[np.arange(test.n), ev.choices[p]]
    labels = np.unique(test.group_id)
    means = np.array([acc[test.group_id == g].mean() for g in labels])
    G = means.size
    half = stats.t.ppf(0.975, G - 1) * means.std(ddof=1) / np.sqrt(G)
    np.testing.assert_allclose(ev.point[p, 0, -1], means.mean(), rtol=1e-12)
    np.testing.assert_allclose(
        [ev.lower[p, 0, -1], ev.upper[p, 0, -1]], [means.mean() - half, means.mean() + half]
    )
    assert ev.info["interval"] == "t"


def test_unknown_interval_is_refused(toy):
    from retcon.errors import InputError

    with pytest.raises(InputError, match="interval"):
        evaluate(jax.random.key(0), toy, interval="bca")


@pytest.mark.slow
def test_evaluate_interval_coverage():
    """docs/statistics.md: measured coverage of the two interval rules of `oas.evaluate` in worlds
    where the mean accuracy is known (group accuracies ~ Beta with mean 0.6, 30-150 rows per group,
    Bernoulli outcomes). With 3 test groups (LoCoMo's default split) the percentile bootstrap
    covers about 75% for a nominal 95%; the t interval over group means holds >= 92%."""
    from retcon.bootstrap import grouped_bootstrap_mean
    from retcon.inference import group_mean_interval

    rng = np.random.default_rng(0)
    truth, conc, worlds = 0.6, 12.0, 300
    for G, t_min, pct_max in ((3, 0.92, 0.85), (10, 0.92, 1.0)):
        hit_t = hit_pct = 0
        for w in range(worlds):
            pg = rng.beta(truth * conc, (1 - truth) * conc, G)
            groups = np.repeat(np.arange(G), rng.integers(30, 150, G))
            y = (rng.random(groups.size) < pg[groups]).astype(float)
            t = group_mean_interval(y, groups)
            b = grouped_bootstrap_mean(jax.random.key(w), y, groups, n_resamples=500)
            hit_t += bool(t.lower[0] <= truth <= t.upper[0])
            hit_pct += bool(b.lower <= truth <= b.upper)
        assert hit_t / worlds >= t_min, (G, hit_t / worlds)
        assert hit_pct / worlds <= pct_max, (G, hit_pct / worlds)
