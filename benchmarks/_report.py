"""Plain-text tables of benchmark results and the verdicts against the speed targets."""

from __future__ import annotations

import math


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if v == 0:
            return "0"
        a = abs(v)
        if a >= 1000:
            return f"{v:,.0f}"
        if a >= 100:
            return f"{v:.0f}"
        if a >= 10:
            return f"{v:.1f}"
        if a >= 0.01:
            return f"{v:.3f}"
        return f"{v:.2e}"
    return str(v)


def table(rows: list[dict], columns: list[tuple[str, str]], title: str) -> str:
    """A Markdown table of ``rows``; ``columns`` are ``(key, header)`` pairs (missing keys print ``-``)."""
    head = "| " + " | ".join(h for _, h in columns) + " |"
    rule = "| " + " | ".join("---" for _ in columns) + " |"
    body = ["| " + " | ".join(_fmt(r.get(k)) for k, _ in columns) + " |" for r in rows]
    return "\n".join([f"### {title}", "", head, rule, *body, ""])


SIM_COLS = [
    ("queries", "queries"),
    ("budgets", "budgets"),
    ("jax_s", "JAX frontier s"),
    ("numpy_s", "numpy frontier s"),
    ("numpy_pb_s", "numpy per-budget s"),
    ("jax_pb_s", "JAX per-budget (previous kernel) s"),
    ("speedup_vs_best_numpy", "JAX / best numpy"),
    ("speedup", "JAX / numpy frontier"),
    ("speedup_vs_numpy_pb", "JAX / numpy per-budget"),
    ("speedup_vs_jax_pb", "JAX / previous kernel"),
    ("jax_us_per_query", "JAX us/query"),
    ("jax_compile_s", "JAX compile s"),
    ("jax_rss_peak_mib", "JAX peak RSS MiB"),
    ("numpy_rss_peak_mib", "numpy peak RSS MiB"),
    ("bytes_per_query", "bytes moved/query"),
    ("jax_fraction_of_bandwidth", "JAX frac. of copy bandwidth"),
    ("jax_cpu_per_wall", "JAX cores busy"),
    ("numpy_blas", "numpy BLAS"),
    ("jax_same_totals_as_per_budget", "same totals"),
    ("max_abs_z_delta", "max abs z of dU (vs numpy)"),
]
BUDGET_COLS = [
    ("budgets", "budgets"),
    ("queries", "queries"),
    ("jax_s", "JAX frontier s"),
    ("numpy_s", "numpy frontier s"),
    ("numpy_pb_s", "numpy per-budget s"),
    ("jax_pb_s", "JAX per-budget (previous kernel) s"),
    ("speedup", "JAX / numpy frontier"),
    ("jax_us_per_query", "JAX us/query"),
    ("growth", "JAX cost vs first row"),
    ("jax_same_totals_as_per_budget", "same totals"),
]
PROFILE_CPU_COLS = [
    ("budgets", "budgets"),
    ("draws", "draws"),
    ("frontier", "frontier and outcome table"),
    ("budgets_stage", "budget reading and block sums"),
    ("chunk", "whole chunk, frontier"),
    ("chunk_pb", "whole chunk, per-budget path"),
]
SCALE_COLS = [
    ("devices", "devices"),
    ("queries", "queries"),
    ("jax_s", "JAX s"),
    ("mevals_per_s", "M eval/s"),
    ("speedup_vs_first", "speedup vs 1 device"),
    ("cpu_per_wall", "cores busy (CPU s / wall s)"),
    ("rss_peak_mib", "peak RSS MiB"),
    ("same_totals", "same totals"),
]
OAS_COLS = [
    ("instances", "instances"),
    ("jax_f64_s", "JAX f64 s"),
    ("jax_f32_s", "JAX f32 s"),
    ("numpy_s", "numpy same closed form s"),
    ("sklearn_ridge_s", "scikit-learn multi-target Ridge s"),
    ("speedup_f64_vs_numpy", "JAX f64 / numpy"),
    ("speedup_f32_vs_numpy", "JAX f32 / numpy"),
    ("speedup_f64_vs_sklearn_ridge", "JAX f64 / Ridge"),
    ("numpy_vs_sklearn_ridge", "numpy / Ridge"),
    ("compile_s", "JAX compile s"),
    ("gflops_f64", "JAX GFLOP/s"),
    ("fraction_of_f64_matmul", "frac. of f64 matmul"),
    ("same_penalties", "same penalties (all)"),
    ("max_coef_diff_numpy", "max coef diff numpy"),
    ("max_coef_diff_sklearn_ridge", "max coef diff Ridge"),
]
BOOT_COLS = [
    ("rows", "rows"),
    ("groups", "groups"),
    ("stats", "statistics"),
    ("resamples", "resamples"),
    ("vectorized_s", "JAX s"),
    ("numpy_s", "numpy same algorithm s"),
    ("speedup_vs_numpy", "JAX / numpy"),
    ("draws_s", "draws s (shared)"),
    ("jax_resample_s", "JAX resample + percentiles s"),
    ("numpy_resample_s", "numpy resample + percentiles s"),
    ("resample_speedup_vs_numpy", "JAX / numpy, resample stage"),
    ("gflops", "GFLOP/s"),
    ("fraction_of_f32_matmul", "frac. of f32 matmul"),
    ("max_abs_diff_numpy", "max abs diff numpy"),
]
CHECK_COLS = [
    ("scenario", "scenario"),
    ("queries", "queries"),
    ("budgets", "budgets"),
    ("m_mismatch", "m mismatches"),
    ("raw_grounded_mismatch", "G_B mismatches"),
    ("affected_mismatch", "H_B mismatches"),
    ("sums_equal", "dU, C, R sums equal"),
]


INTERLEAVED_COLS = [
    ("queries", "queries"),
    ("budgets", "budgets"),
    ("rounds", "rounds"),
    ("jax_us_per_query", "JAX us/query"),
    ("numpy_best_us_per_query", "best numpy us/query"),
    ("numpy_best_1thread_us_per_query", "best numpy, 1 thread, us/query"),
    ("numpy_frontier_us_per_query", "numpy frontier us/query"),
    ("speedup_vs_best_numpy", "JAX / best numpy"),
    ("speedup_vs_best_numpy_1thread", "JAX / best numpy 1 thread"),
    ("speedup_vs_numpy_frontier", "JAX / numpy frontier"),
    ("jax_cpu_per_wall", "JAX cpu/wall"),
    ("numpy_best_cpu_per_wall", "best numpy cpu/wall"),
]

WORDS_COLS = [
    ("queries", "queries"),
    ("words_needed_per_query", "words needed/query"),
    ("words_generated_per_query_lower_bound", "words generated/query (>=)"),
    ("words_from_key_derivation", "of which key derivation"),
    ("gamma_loops_per_query", "gamma loops/query (not counted)"),
    ("generated_over_needed", "generated / needed"),
    ("kernel_us_per_query", "JAX kernel us/query"),
    ("threefry_floor_us_per_query", "Threefry floor us/query"),
    ("kernel_over_floor", "kernel / floor"),
]

NUMPY_FLOOR_COLS = [
    ("queries", "queries"),
    ("normals_per_query", "normals/query"),
    ("kernel_us_per_query", "numpy kernel us/query"),
    ("normal_floor_us_per_query", "float32-normal floor us/query"),
    ("kernel_over_floor", "kernel / floor"),
    ("normals_drawn_per_query", "normals drawn/query"),
    ("kernel_over_drawn_normals", "kernel / normals drawn"),
    ("draws_over_floor", "draws / floor"),
]


TIMELINE_COLS = [
    (k, k)
    for k in (
        "sessions",
        "queries",
        "jax_s_per_query",
        "numpy_s_per_query",
        "numpy_over_jax",
        "max_diff_grid_steps",
    )
]
FLOOR_COLS = [
    ("command", "command"),
    ("instances", "instances"),
    ("cold_cpu_s", "CPU s (first run)"),
    ("cpu_s", "CPU s"),
    ("peak_mib", "peak MiB"),
    ("floor", "floor"),
    ("floor_cpu_s", "floor CPU s"),
    ("ratio", "CPU / floor"),
]
FLOOR_STAGE_COLS = [
    ("command", "command"),
    ("stage", "stage"),
    ("cpu_s", "CPU s"),
    ("floor", "floor"),
    ("floor_cpu_s", "floor CPU s"),
    ("ratio", "CPU / floor"),
    ("ratio_floored", "floored stages' CPU / floor"),
]
TARGET_COLS = [("target", "target"), ("measured", "measured"), ("met", "met")]


def _row_at(rows, key, value):
    for r in rows or []:
        if r.get(key) == value:
            return r
    return None


def _target(target: str, measured, ok) -> dict:
    """A target with its measured figure and whether ``ok(measured)`` (None: not measured)."""
    return {
        "target": target,
        "measured": measured,
        "met": None if measured is None else ok(measured),
    }


def _at_least(target: str, r: dict | None, key: str, goal: float) -> dict:
    """A target met when row ``r``'s ``key`` is at least ``goal`` (None: no row or no figure)."""
    return _target(target, None if r is None else r.get(key), lambda v: v >= goal)


def _at_most(target: str, r: dict | None, key: str, goal: float) -> dict:
    """A target met when row ``r``'s ``key`` is at most ``goal`` (None: no row)."""
    return _target(target, None if r is None else r[key], lambda v: v <= goal)


def targets(result: dict) -> list[dict]:
    """The speed targets, each with the measured figure and whether it is met (None: not run)."""
    out = []
    sim = result.get("sim") or []
    r = _row_at(sim, "queries", 10**6)
    what = "simulation JAX >= 1.5x the best numpy at 10^6 queries, 29 budgets"
    out.append(_at_least(what, r, "speedup_vs_best_numpy", 1.5))
    r_i = _row_at(result.get("sim_interleaved"), "queries", 10**6)
    what = (
        "simulation JAX >= 1.5x the best numpy at 10^6 queries, one process, "
        "interleaved (else the numpy kernel is the CPU default)"
    )
    out.append(_at_least(what, r_i, "speedup_vs_best_numpy", 1.5))
    w = (result.get("sim_words") or [None])[0]
    what = "simulation JAX draws: words generated <= 1.2x the words needed per query"
    out.append(_at_most(what, w, "generated_over_needed", 1.2))
    what = "simulation JAX kernel <= 1.5x the Threefry floor for the words it needs"
    out.append(_at_most(what, w, "kernel_over_floor", 1.5))
    nf = (result.get("sim_numpy_floor") or [None])[0]
    what = "simulation numpy kernel <= 2x the float32-normal draw floor per query"
    out.append(_at_most(what, nf, "kernel_over_floor", 2.0))
    what = "simulation JAX >= 3x the numpy frontier formulation at 10^6 queries, 29 budgets"
    out.append(_at_least(what, r, "speedup", 3))
    bud = result.get("sim_budgets") or []
    if len(bud) >= 2:
        g = max(x["jax_s"] for x in bud) / min(x["jax_s"] for x in bud)
        what = (
            f"simulation cost per query grows < 1.5x from {bud[0]['budgets']} to "
            f"{bud[-1]['budgets']} budgets"
        )
        out.append(_target(what, g, lambda v: v < 1.5))
    else:
        out.append(_target("simulation cost flat in the budgets", None, None))
    r = max(sim, key=lambda x: x["queries"]) if sim else None
    what = "simulation >= 50% of copy bandwidth for the bytes it must move" + (
        "" if r is None else f" ({r['bytes_per_query']} B/query)"
    )
    out.append(_at_least(what, r, "jax_fraction_of_bandwidth", 0.5))
    r = _row_at(result.get("oas") or [], "instances", 10**5)
    for key, alt, goal in (
        (
            "speedup_f64_vs_numpy",
            "JAX f64 >= 1.5x numpy running the same sufficient statistics",
            1.5,
        ),
        ("speedup_f64_vs_sklearn_ridge", "JAX f64 >= 2x scikit-learn multi-target Ridge", 2.0),
    ):
        out.append(_at_least(f"OAS grid {alt} at 10^5 instances", r, key, goal))
    boot = result.get("bootstrap") or []
    r = _row_at(boot, "rows", 10**5)
    what = "bootstrap JAX >= 1.5x numpy running the same algorithm at 10^5 rows"
    out.append(_at_least(what, r, "speedup_vs_numpy", 1.5))
    r7, r6 = _row_at(sim, "queries", 10**7), _row_at(sim, "queries", 10**6)
    if r7 is not None and r6 is not None:
        bounded = r7["jax_rss_peak_mib"] <= 1.1 * r6["jax_rss_peak_mib"] + 64
        what = "10^7 queries with bounded peak memory (peak at 10^7 within 10% + 64 MiB of 10^6)"
        peaks = (
            f"{r7['jax_rss_peak_mib']:.0f} MiB at 10^7 vs {r6['jax_rss_peak_mib']:.0f} MiB at 10^6"
        )
        out.append(_target(what, peaks, lambda _: bool(bounded)))
    else:
        out.append(_target("10^7 queries with bounded peak memory", None, None))
    return out


def _tables(result: dict, specs) -> list[str]:
    """The tables of ``specs`` (``(key, columns, title)``) whose key ``result`` holds."""
    return [table(result[key], cols, title) for key, cols, title in specs if result.get(key)]


def render_report(result: dict) -> str:
    """All tables of a benchmark run, in Markdown, machine first and targets last."""
    parts = []
    m = result.get("machine") or {}
    lim = result.get("limits") or {}
    if m:
        parts.append("### Machine\n")
        parts.append(
            f"- CPU: {m.get('cpu_model')}, {m.get('nproc')} logical CPUs, "
            f"{_fmt(m.get('memory_gib'))} GiB memory; load average at start {m.get('loadavg')}"
        )
        parts.append(
            f"- numpy {m.get('numpy')}, JAX {m.get('jax')} ({m.get('jax_backend')}), "
            f"scikit-learn {m.get('scikit_learn')}, Python {m.get('python')}"
        )
    if lim:
        parts.append(
            f"- limits measured in this run: memory bandwidth {_fmt(lim['bandwidth_gbs'])} GB/s "
            f"(copy of {lim['copy_bytes'] // 2**20} MiB, read + write); BLAS matmul "
            f"{_fmt(lim['gflops_f64'])} GFLOP/s float64, {_fmt(lim['gflops_f32'])} GFLOP/s float32 "
            f"(n = {lim['matmul_n']})\n"
        )
    parts += _tables(
        result,
        (
            ("sim_check", CHECK_COLS, "Simulation kernel: numpy vs JAX on the same draws"),
            ("sim", SIM_COLS, "Simulation kernel: JAX vs numpy, end to end (queries)"),
            (
                "sim_interleaved",
                INTERLEAVED_COLS,
                "Simulation kernel: JAX vs the best numpy, interleaved in one process (medians)",
            ),
            (
                "sim_words",
                WORDS_COLS,
                "Simulation kernel (JAX): words drawn per query and the Threefry floor",
            ),
            (
                "sim_numpy_floor",
                NUMPY_FLOOR_COLS,
                "Simulation kernel (numpy, one thread): time per query and the float32-normal floor",
            ),
            ("sim_budgets", BUDGET_COLS, "Simulation kernel: cost against budgets"),
            ("scaleout", SCALE_COLS, "Simulation kernel: sharded over forced host devices"),
        ),
    )
    if result.get("profile"):
        p = result["profile"]
        rows = [{"stage": f"JAX: {k}", "seconds": v} for k, v in p["jax"].items()]
        rows += [{"stage": f"numpy: {k}", "seconds": v} for k, v in p["numpy"].items()]
        what = f"one chunk of {p['queries']:,} queries"
        columns = [("stage", "stage"), ("seconds", "seconds")]
        title = f"Simulation kernel profile: {what} x {p['budgets']} budgets"
        parts.append(table(rows, columns, title))
        if p.get("jax_cpu_us"):
            title = f"Simulation kernel profile: process CPU us per query, {what}"
            parts.append(table(p["jax_cpu_us"], PROFILE_CPU_COLS, title))
    parts += _tables(
        result,
        (
            (
                "oas",
                OAS_COLS,
                "OAS ridge grid (4 actions x 20 penalties x 5 grouped folds x 7 budgets): JAX vs "
                "numpy and scikit-learn",
            ),
            (
                "timeline",
                TIMELINE_COLS,
                "Timeline kernel (MODEL §10, prefix, retain-all/overflow/periodic): JAX vs numpy, "
                "same draws",
            ),
            (
                "bootstrap",
                BOOT_COLS,
                "Grouped bootstrap CI: JAX vs numpy (same algorithm)",
            ),
            (
                "floors",
                FLOOR_COLS,
                "Commands against their floors (whole processes; floors measured in this run)",
            ),
            (
                "floor_stages",
                FLOOR_STAGE_COLS,
                "Each command's stages against their floors (the total: the whole process against "
                "the sum of its stage floors)",
            ),
            ("targets", TARGET_COLS, "Targets"),
        ),
    )
    return "\n".join(parts)
