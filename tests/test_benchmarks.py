"""Smoke runs of every benchmark at tiny sizes, and the checks the benchmarks rely on.

No timing is asserted anywhere: times are only required to be positive and finite. What is
asserted is that each benchmark's two implementations compute the same thing (the condition under
which their ratio means anything), each against an independent reference or invariant.
"""

import json
import math
import subprocess
import sys

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import benchmarks
import theory
from benchmarks._bootstrap_bench import make_data
from benchmarks._report import render_report, targets
from benchmarks._sim_bench import check_sim_agreement
from sim import numpy_kernel as NK
from tests._references import sim_numpy as S
from tests._sim_helpers import SLOW_PACKINGS, make_scenario


def test_public_names_import():
    for name in vars(benchmarks)["__all__"]:
        assert getattr(benchmarks, name) is not None


def test_machine_limits_are_positive():
    lim = benchmarks.machine_limits(copy_mib=8, matmul_n=128, repeats=2)
    assert all(
        math.isfinite(v) and v > 0 for v in (lim.bandwidth_gbs, lim.gflops_f64, lim.gflops_f32)
    )
    info = benchmarks.machine_info()
    assert info["nproc"] >= 1 and info["jax"] == jax.__version__


def test_bootstrap_bench_smoke():
    """The JAX CI equals numpy's on the same multiplicities (checked inside)."""
    rows = benchmarks.bench_bootstrap(0, [120], n_resamples=200, repeats=1)
    (r,) = rows
    assert r["groups"] == 10 and r["max_abs_diff_numpy"] < 1e-5
    assert r["vectorized_s"] > 0 and r["numpy_s"] > 0
    assert r["jax_resample_s"] > 0 and r["numpy_resample_s"] > 0 and r["draws_s"] > 0


def test_numpy_bootstrap_is_the_percentile_of_the_shared_resamples():
    """MODEL §8: numpy_bootstrap's bounds are the percentiles of (w @ sums) / (w @ counts) for the
    multiplicities group_resample_weights draws from the key, which count the groups that
    resample_draws draws; the group sums taken here by a loop over groups (float64: to 1e-12)."""
    from benchmarks._bootstrap_bench import numpy_bootstrap
    from retcon.bootstrap import group_resample_weights, resample_draws

    # the shapes of test_bootstrap_bench_smoke (10 groups, 200 resamples): no new compilation
    data = make_data(4, 120, 10, n_stats=3)
    key = jax.random.key(7)
    lo, hi = numpy_bootstrap(key, data, 200)
    draws = resample_draws(key, 10, 200)
    w = group_resample_weights(key, 10, 200)
    assert np.array_equal(np.stack([np.bincount(d, minlength=10) for d in draws]), w)
    sums = np.stack([(data.values * data.mask)[data.groups == g].sum(0) for g in range(10)])
    counts = np.stack([data.mask[data.groups == g].sum(0) for g in range(10)])
    with np.errstate(invalid="ignore"):
        means = (w @ sums) / (w @ counts)
    llo, lhi = np.nanquantile(means, 0.025, axis=0), np.nanquantile(means, 0.975, axis=0)
    np.testing.assert_allclose(lo, llo, rtol=0, atol=1e-12)
    np.testing.assert_allclose(hi, lhi, rtol=0, atol=1e-12)
    assert np.all(lo <= hi)


@pytest.mark.slow  # moved from the fast tier to keep it under 3 minutes on 2 cores
def test_oas_bench_smoke():
    """JAX grid, numpy's closed form and multi-target Ridge choose the same penalties,
    coefficients within 1e-6 (float64)."""
    pytest.importorskip("sklearn", reason="the bench extra: pip install 'retcon[bench]'")
    rows = benchmarks.bench_oas(0, [210], repeats=1, penalties=(0.1, 10.0, 1000.0))
    (r,) = rows
    assert r["same_penalties"] and r["max_coef_diff"] < 1e-6 and r["max_intercept_diff"] < 1e-6
    for name in ("numpy", "sklearn_ridge"):
        assert r[f"same_penalties_{name}"] and r[f"{name}_s"] > 0
    assert r["jax_f64_s"] > 0 and r["penalties"] == 3


@pytest.mark.slow
def test_sklearn_ridge_anchor_is_caught_when_it_differs():
    """The agreement check can fail: a grid whose penalties differ from fit_ridge's raises."""
    pytest.importorskip("sklearn", reason="the bench extra: pip install 'retcon[bench]'")
    from benchmarks import _oas_bench as O

    data = O.make_data(1, 140)
    key = jax.random.key(0)
    pens = (0.1, 10.0, 1000.0)
    good = O.check_oas_agreement(key, data, penalties=pens, alternatives=("sklearn_ridge",))
    assert good["same_penalties"] and good["max_coef_diff_sklearn_ridge"] < 1e-9
    real = O.ALTERNATIVES["sklearn_ridge"]

    def shifted(data, folds, penalties=O.PENALTIES):
        return [{**r, "coef": r["coef"] + 1e-3} for r in real(data, folds, penalties)]

    try:
        O.ALTERNATIVES["sklearn_ridge"] = shifted
        with pytest.raises(AssertionError, match="sklearn_ridge disagree"):
            O.check_oas_agreement(key, data, penalties=pens, alternatives=("sklearn_ridge",))
    finally:
        O.ALTERNATIVES["sklearn_ridge"] = real


# every packing in the slow tier (a compile each, ~20 s of CPU).
@pytest.mark.parametrize("packing", SLOW_PACKINGS)
def test_numpy_kernel_equals_jax_kernel_on_shared_draws(packing):
    """MODEL §2-§4: fed the JAX kernel's draws, the numpy kernel gives the same success
    probabilities on the 2**-24 grid, the same G_B and H_B, hence the same dU, C and R sums, for
    every packing mode (ranked distractors, multi-record clusters, a noisy retriever)."""
    sc = make_scenario(
        records=3,
        redundancy=0.3,
        packing=packing,
        order="noisy",
        distractors=4,
        noise=0.7,
        acc_guess=0.1,
        budgets=(8.0, 2048.0, 12),
    )
    for n in (512, 2048):  # the kernel fixes its reduction order, so any batch size agrees
        row = check_sim_agreement(1, sc, n=n)
        assert row["m_mismatch"] == row["raw_grounded_mismatch"] == row["affected_mismatch"] == 0
        assert row["sums_equal"]


@given(
    st.lists(st.integers(1, 64), min_size=1, max_size=9),
    st.integers(0, 300),
    st.sampled_from(["prefix", "skip", "cut"]),
)
def test_numpy_packing_matches_the_rule(lengths, budget, mode):
    """MODEL §2: prefix stops at the first misfit, skip passes over it, cut truncates it and stops.
    Integer token counts keep float32 sums exact, so the comparison is exact."""
    ranked = np.asarray(lengths, np.float32)[None, None, :]
    kept = S._pack(ranked, np.asarray([budget], np.float32), mode)[0, 0, 0]
    np.testing.assert_array_equal(
        kept, np.asarray(theory.pack_reference(lengths, budget, mode), np.float32)
    )


def test_numpy_block_sums_match_a_python_loop():
    """MODEL §3-§4: the block columns are sums over queries of m per action, of d = m_o - m_ret,
    of d outside G_B (coverage) and of the G_B / H_B counts; checked against a loop over queries.
    The numpy kernel's own draws are used (any packing), so the partition holds in general."""
    sc = make_scenario(
        records=2,
        redundancy=0.2,
        distractors=3,
        order="noisy",
        noise=0.5,
        packing="cut",
        budgets=(8.0, 1024.0, 6),
    )
    st, pr = S.params_of(sc)
    b = np.geomspace(8, 1024, 6).astype(np.float32)
    out = S.evaluate(S.draw(np.random.default_rng(5), 300, st, pr), b, pr, st.packing)
    for first in (0, 2):  # aligned chunk (reshape path) and unaligned indices (scatter-add path)
        sums = S.block_sums(out, np.arange(first, first + 300), 4)
        ref = np.zeros_like(sums)
        for q in range(300):
            blk = (first + q) % 4
            m = out.m[q].astype(np.int64)
            d = m[:, 1:] - m[:, :1]
            g = out.raw_grounded[q]
            ref[blk, :, 0:4] += m
            ref[blk, :, 4:7] += d
            ref[blk, :, 7:10] += np.where(g[:, None], 0, d)
            ref[blk, :, 10] += g
            ref[blk, :, 11:14] += out.affected[q]
            ref[blk, :, 14:17] += out.affected[q] & g[:, None]
        np.testing.assert_array_equal(sums, ref)


@pytest.mark.parametrize("noise", [0.0, 0.5])
def test_best_numpy_equals_per_budget_packing(noise):
    """MODEL §2-§4 (prefix): sim.numpy_kernel's frontier (one sorting network for ret and rewrite,
    the generated record placed in closed form) gives the per-budget packing's m, G_B and H_B on
    the same draws (tied oracle scores too, and generated records of length ~0), and its event
    histogram gives the per-budget block sums for a chunk that starts off a block boundary."""
    order = "noisy" if noise else "oracle"
    for sc in (
        make_scenario(
            records=3,
            redundancy=0.3,
            packing="prefix",
            order=order,
            distractors=4,
            noise=noise,
            budgets=(8.0, 2048.0, 12),
        ),
        make_scenario(
            records=3,
            redundancy=0.99,
            rho=(1.0, 1e-9, 1e-9),
            packing="prefix",
            order=order,
            noise=noise,
            distractors=4,
            budgets=(1e-3, 1e4, 9),
        ),
    ):
        st_, pr = S.params_of(sc)
        b = np.asarray(sc.budgets, np.float32)
        c = NK.draw_columns(np.random.default_rng(2), 600, st_, pr)
        ref = S.evaluate(NK.draw_of_columns(c), b, pr, "prefix")
        t = NK.frontier_columns(c, pr)
        for x, y in zip(NK.outcome_of_frontier(t, b), ref):
            np.testing.assert_array_equal(x, y)
        rows = np.arange(3, 603)
        got, want = NK.event_block_sums(t, b, 3, 8), S.block_sums(ref, rows, 8)
        np.testing.assert_array_equal(got[..., :10], want[..., :10])  # per block
        np.testing.assert_array_equal(got[..., 10:].sum(0), want[..., 10:].sum(0))  # counts: totals


@pytest.mark.slow  # moved from the fast tier to keep it under 3 minutes on 2 cores
def test_worker_tasks_in_process():
    """The subprocess tasks, run in this process at a tiny size: fields present and consistent."""
    from benchmarks import _worker

    spec = {"scenario": "single-cluster", "n": 1024, "seed": 0, "warm_n": 1024}
    j = _worker.sim_jax(spec)
    jp = _worker.sim_jax({**spec, "method": "per-budget"})
    p = _worker.sim_numpy(spec)
    pp = _worker.sim_numpy({**spec, "method": "per-budget"})
    pb = _worker.sim_numpy({**spec, "method": "best"})
    for r in (j, jp, p, pp, pb):
        assert r["seconds"] > 0 and r["rss_peak_mib"] > 0
        assert np.asarray(r["delta"]).shape == (3, r["n_budgets"])
    assert j["devices"] == len(jax.devices())
    # the same key: the frontier and the per-budget kernel give the same sums and errors
    assert jp["delta_total"] == j["delta_total"] and jp["delta"] == j["delta"]
    np.testing.assert_allclose(jp["delta_se"], j["delta_se"], rtol=1e-12)
    # the same generator: numpy's two formulations give the same sums
    assert pp["delta_total"] == p["delta_total"] and "blas" in p


@pytest.mark.slow
def test_profile_stages():
    """The stage profile times the frontier and the per-budget path, JAX and numpy."""
    p = benchmarks.profile_sim(0, "locomo-like", n=1024)
    assert any("frontier" in k for k in p["jax"]) and any("per-budget" in k for k in p["jax"])
    assert all(v >= 0 for v in p["numpy"].values())


def test_numpy_floor_bench_reads_the_kernel_stages():
    """The numpy kernel's floor row: the stages sum to the kernel's time, the floor is positive
    and the ratio is the two side by side."""
    from benchmarks._sim_bench import bench_numpy_floor

    r = bench_numpy_floor(0, 2048, rounds=1)
    assert r["queries"] == 2048 and r["normals_per_query"] > 0
    per = r["stage_us_per_query"]
    assert sum(per.values()) == pytest.approx(r["kernel_us_per_query"])
    assert r["kernel_over_floor"] == pytest.approx(
        r["kernel_us_per_query"] / r["normal_floor_us_per_query"]
    )
    assert sum(r["stage_share"].values()) == pytest.approx(1.0)


def test_numpy_floor_row_runs_in_a_process_without_jax():
    """The benchmarks' floor row is measured in a fresh process (``_worker.numpy_floor``),
    where the numpy kernel and its floor share no core with XLA's threads: JAX is never loaded."""
    from benchmarks._timing import run_worker

    spec = {"seed": 0, "n": 1024, "scenario": "locomo-like", "rounds": 1}
    f = run_worker("numpy_floor", spec)
    assert f["queries"] == 1024 and f["kernel_over_floor"] > 0
    assert f["jax_loaded"] is False


def test_targets_verdicts():
    """The target table reads the right rows: 10^6 queries, 10^5 instances, 10^5 bootstrap rows
    for the numpy anchor."""
    result = {
        "sim": [
            {
                "queries": 10**6,
                "speedup": 3.5,
                "speedup_vs_best_numpy": 0.5,
                "jax_rss_peak_mib": 800.0,
            },
            {
                "queries": 10**7,
                "jax_rss_peak_mib": 2000.0,
                "bytes_per_query": 1000,
                "jax_fraction_of_bandwidth": 0.1,
            },
        ],
        "sim_interleaved": [{"queries": 10**6, "speedup_vs_best_numpy": 0.6}],
        "sim_words": [{"generated_over_needed": 2.1, "kernel_over_floor": 1.4}],
        "sim_numpy_floor": [{"kernel_over_floor": 2.5}],
        "sim_budgets": [
            {"budgets": 1, "jax_s": 1.0},
            {"budgets": 64, "jax_s": 1.6},
        ],
        "oas": [
            {
                "instances": 10**5,
                "speedup_f64_vs_numpy": 0.5,
                "speedup_f64_vs_sklearn_ridge": 2.5,
            }
        ],
        "bootstrap": [
            {"rows": 10, "speedup": 80.0},
            {"rows": 10**5, "speedup": 40.0, "speedup_vs_numpy": 1.6},
        ],
    }
    met = [t["met"] for t in targets(result)]
    assert met == [
        *(False, False, False, True),  # sim: best numpy, interleaved, words, Threefry floor
        False,  # sim: the numpy kernel over its float32-normal floor
        *(True, False, False),  # sim: numpy frontier, budgets, bandwidth
        *(False, True),  # OAS
        *(True, False),  # bootstrap numpy; memory
    ]
    result["sim"][1]["jax_rss_peak_mib"] = 820.0
    result["sim_budgets"][1]["jax_s"] = 1.4
    result["sim"][0]["speedup_vs_best_numpy"] = 1.6
    result["sim_interleaved"][0]["speedup_vs_best_numpy"] = 1.6
    result["sim_numpy_floor"][0]["kernel_over_floor"] = 1.9
    t = targets(result)
    assert t[-1]["met"] is True and t[6]["met"] is True and t[0]["met"] is True
    assert t[4]["met"] is True
    assert t[1]["met"] is True
    text = render_report({**result, "targets": targets(result)})
    assert "| 1,000,000 |" in text and "Targets" in text


def _bench(*args, module="benchmarks"):
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("args", [["--only", "bogus"], ["--sizes", "0"], ["--sizes", "abc"]])
def test_cli_bad_options_exit_2_with_one_line(args):
    r = _bench(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [[], ["--quick"], ["-h"]])
def test_retcon_bench_points_to_python_m_benchmarks(args):
    """``retcon bench`` left with the benchmarks: for one release it says where they went, one
    line, exit status 2, whatever the options."""
    r = _bench("bench", *args, module="retcon")
    assert r.returncode == 2 and r.stdout == ""
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("retcon bench: error:") and "python -m benchmarks" in line


def test_bench_config_validates():
    with pytest.raises(ValueError, match="BenchConfig.only"):
        benchmarks.BenchConfig(only=("nope",))
    with pytest.raises(ValueError, match="BenchConfig.sim_sizes"):
        benchmarks.BenchConfig(sim_sizes=(0,))


@pytest.mark.slow
def test_cli_quick_json_end_to_end(tmp_path):
    """``python -m benchmarks --quick --json --out DIR``: one JSON object on stdout, every table,
    files written."""
    # every benchmark but the floors, whose eight processes have their own test below
    only = ",".join(b for b in benchmarks.BENCHMARKS if b != "floors")
    r = _bench("--quick", "--only", only, "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    for k in (
        "machine",
        "limits",
        "bootstrap",
        "oas",
        "sim_check",
        "sim",
        "sim_interleaved",
        "sim_words",
        "sim_budgets",
        "scaleout",
        "profile",
        "targets",
    ):
        assert k in obj
    assert obj["sim_interleaved"][0]["speedup_vs_best_numpy"] > 0
    assert [row["devices"] for row in obj["scaleout"]] == [1, 2]
    assert all(row["same_totals"] for row in obj["scaleout"])
    assert (tmp_path / "bench.json").is_file() and (tmp_path / "bench.md").is_file()


@pytest.mark.slow  # two compilations of the kernel: ~6 s under load
def test_timeline_numpy_equals_the_kernel_smoke():
    """MODEL §10: the numpy timeline (the bench's baseline) gives the JAX kernel's success
    probabilities on the same draws (prefix packing: the same float32 running totals; XLA's and
    numpy's float32 pow may differ in the last bit: one 2**-24 grid step)."""
    from benchmarks._timeline_bench import bench_timeline

    (row,) = bench_timeline(0, (4,), queries=8, repeats=1)
    assert row["max_diff_grid_steps"] <= 1
    assert row["jax_s_per_query"] > 0 and row["numpy_s_per_query"] > 0


@pytest.mark.slow  # eight whole processes (pair simulate, read, evaluate, identify; twice each)
def test_floors_rows_read_each_command_against_its_floor(tmp_path):
    """Issue 47 item 5: one row per data command, its CPU from a whole process, the floor
    measured in the same run, and the ratio the two side by side (no timing is asserted)."""
    from benchmarks._floors import bench_floors

    rows = bench_floors(0, 300, workdir=str(tmp_path))
    assert [r["command"] for r in rows] == ["pair simulate", "read", "evaluate", "identify"]
    for r in rows:
        assert r["cpu_s"] > 0 and r["cold_cpu_s"] > 0 and r["peak_mib"] > 0
        assert r["floor_cpu_s"] > 0
        assert r["ratio"] == pytest.approx(r["cpu_s"] / r["floor_cpu_s"])
        # by stage: each floored stage's ratio is its CPU over its floor, and the total's floor
        # is the sum of the stage floors (the stages with none written counted apart)
        *stages, total = r["stages"]
        assert total["stage"] == "total (whole process)" and total["cpu_s"] == r["cpu_s"]
        floored = [s for s in stages if s["floor_cpu_s"] is not None]
        assert floored and all(s["floor_cpu_s"] > 0 for s in floored)
        for s in floored:
            assert s["ratio"] == pytest.approx(s["cpu_s"] / s["floor_cpu_s"])
        assert total["floor_cpu_s"] == pytest.approx(sum(s["floor_cpu_s"] for s in floored))
        assert total["unfloored_s"] == pytest.approx(
            sum(s["cpu_s"] for s in stages if s["floor_cpu_s"] is None)
        )
