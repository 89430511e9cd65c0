"""Memory over time, simulated (MODEL §10): the stream scenarios, the policies' generations, the
timeline kernel against theory, and `retcon timeline`'s bad-input contract."""

import json
import math

import numpy as np
import pytest

from retcon.errors import InputError
from tests._cli import run_cli as _run
from tests._toy import stream_toml

BASE = stream_toml()


def _stream_toml(tmp_path, stream: str) -> str:
    p = tmp_path / "s.toml"
    p.write_text(BASE + "[stream]\n" + stream, encoding="utf-8")
    return str(p)


def _overflow_reference(lengths, rho, cap, max_generation):
    """MODEL §10 overflow, one pass at a time: fewest passes first, oldest first."""
    T = len(lengths)
    g = np.zeros(T, int)
    out = []
    for t in range(T):
        present = np.arange(T) <= t
        while (lengths * rho**g)[present].sum() > cap and g[present].min() < max_generation:
            rank = np.where(present & (g < max_generation), g * T + np.arange(T), 10**9)
            g[np.argmin(rank)] += 1
        out.append(g.copy())
    return np.array(out)


def test_overflow_generations_match_one_pass_at_a_time():
    """MODEL §10 (overflow, summaries of summaries): the level-at-a-time kernel equals the rule
    applied one pass at a time."""
    import jax
    import jax.numpy as jnp

    import sim

    overflow = jax.jit(sim.overflow_generations, static_argnums=3)
    rng = np.random.default_rng(1)
    for _ in range(12):
        lengths = rng.exponential(200.0, 12).astype(np.float32)
        rho = np.float32(rng.uniform(0.2, 0.9))
        cap = np.float32(rng.uniform(100.0, 2500.0))
        got = np.asarray(overflow(jnp.asarray(lengths), jnp.float32(rho), jnp.float32(cap), 6))
        ref = _overflow_reference(lengths.astype(np.float64), float(rho), float(cap), 6)
        np.testing.assert_array_equal(got, ref)


def test_overflow_pass_moves_past_an_excess_float32_cannot_add():
    """MODEL §10 (overflow): a pass step with memory over the cap passes at least the oldest unit
    of the lowest level, and otherwise ends at the first unit whose running saving reaches the
    excess. Where the excess is below half an ulp of ``P[start]`` (float32: ``2^24 + 0.5`` is
    ``2^24``), the threshold equals ``P[start]``: a step that ends there does not move the level,
    and the overflow loop never ends (``locomo-stream`` at 256 sessions, seed 0, stream 1881)."""
    import jax.numpy as jnp

    from sim._timeline import pass_end

    P = jnp.asarray([0.0, 2.0**24, 2.0**24 + 2.0, 2.0**24 + 4.0], jnp.float32)
    one = jnp.float32(1.0)
    assert float(P[1] + jnp.float32(0.25) / (one * (one - jnp.float32(0.5)))) == float(P[1])
    end = pass_end(P, jnp.int32(1), jnp.float32(0.25), one, jnp.float32(0.5), jnp.int32(3))
    assert int(end) == 2
    # away from the floor, the first end whose saving reaches the excess (float64 reference)
    rng = np.random.default_rng(4)
    for _ in range(50):
        lengths = rng.exponential(200.0, 10)
        P64 = np.concatenate([[0.0], np.cumsum(lengths)])
        start, rho, power = int(rng.integers(0, 9)), rng.uniform(0.2, 0.9), rng.uniform(0.3, 1.0)
        excess = rng.uniform(1.0, 0.9 * power * (1 - rho) * (P64[-1] - P64[start]))
        saving = power * (1 - rho) * (P64 - P64[start])
        want = int(np.argmax(saving >= excess))
        got = pass_end(
            jnp.asarray(P64, jnp.float32),
            jnp.int32(start),
            jnp.float32(excess),
            jnp.float32(power),
            jnp.float32(rho),
            jnp.int32(10),
        )
        assert abs(int(got) - want) <= 1 and int(got) > start


def test_periodic_generations():
    """MODEL §10 (periodic(m, w)): at every m-th session the raw units older than w get one pass."""
    import sim

    g = sim.periodic_generations(7, 3, 1)
    # at t = 3..5 sessions 1..2 are passed; at t = 6, 7 sessions 1..5
    assert g[2].tolist() == [1, 1, 0, 0, 0, 0, 0]
    assert g[4].tolist() == [1, 1, 0, 0, 0, 0, 0]
    assert g[6].tolist() == [1, 1, 1, 1, 1, 0, 0]
    assert g[1].sum() == 0
    every = sim.periodic_generations(5, 1, 0)
    assert (every == np.tril(np.ones((5, 5), int))).all()


def test_stream_presets_load():
    import sim

    for name in sim.STREAM_PRESETS:
        ss = sim.load_stream(name)
        assert ss.stream.sessions >= 1 and ss.scenario.budgets


@pytest.mark.parametrize(
    ("stream", "words"),
    [
        ('sessions = 0\nsession_length = {dist = "exponential", mean = 1.0}', "stream.sessions"),
        ("sessions = 4", "stream.session_length"),
        ('sessions = 4\nsession_length = {dist = "nope"}', "stream.session_length.dist"),
        ('sessions = 4\nsession_length = {dist = "exponential", mean = -1.0}', "mean"),
        ('sessions = 4\nsession_length = {dist = "exponential", mean = 1.0}\nage = "x"', "age"),
        ('sessions = 4\nsession_length = {dist = "exponential", mean = 1.0}\ncap = 0', "cap"),
        ('sessions = 4\nsession_length = {dist = "exponential", mean = 1.0}\nperiod = 0', "period"),
        ('sessions = 4\nsession_length = {dist = "exponential", mean = 1.0}\nfoo = 1', "foo"),
    ],
)
def test_bad_stream_table(tmp_path, stream, words):
    """Bad input in [stream]: one InputError naming the file and the key."""
    import sim

    path = _stream_toml(tmp_path, stream)
    with pytest.raises(InputError, match=words) as e:
        sim.load_stream(path)
    assert "s.toml" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--scenario", "nope"], ["--scenario", "nope"]),
        (["--policy", "hoard"], ["--policy", "hoard"]),
        (["--budgets", "-5"], ["--budgets"]),
        (["--budgets", "800", "400"], ["--budgets", "increasing"]),
        (["--budgets", "x"], ["--budgets"]),
        (["--queries", "1"], ["--queries"]),
        (["--queries", "x"], ["--queries"]),
        (["--resamples", "-1"], ["--resamples"]),
        (["--seed", "-3"], ["--seed"]),
        (["--data", "f.json"], ["--data"]),
        (["--out", "{file}"], ["--out"]),
        (["locomo"], ["--data"]),
        (["locomo", "--data", "{missing}"], ["--data"]),
        (["locomo", "--data", "{file}", "--passes", "0"], ["--passes"]),
        (["locomo", "--data", "{file}", "--passes", "x"], ["--passes"]),
        (["locomo", "--data", "{file}", "--scenario", "x"], ["--scenario"]),
        (["locomo", "--data", "{file}", "--policy", "hoard"], ["--policy", "hoard"]),
        (["locomo", "--data", "{file}"], ["a_file.json", "JSON list"]),
    ],
)
def test_timeline_bad_input(argv, words, tmp_path, capsys):
    """`retcon timeline`: bad input exits 2 with one line naming the option, nothing on stdout."""
    f = tmp_path / "a_file.json"
    f.write_text("{}", encoding="utf-8")
    fill = {"file": str(f), "missing": str(tmp_path / "missing.json")}
    rc, out, err = _run(["timeline", *[a.format(**fill) for a in argv]], capsys)
    assert rc == 2, (rc, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert out == ""


@pytest.mark.slow
def test_single_cluster_stream_contains_theory(capsys):
    """MODEL §10: on single-cluster-stream the simulated crossover time's interval holds theory's
    t* for every operator and budget (as `retcon simulate` does for B*), and the JSON carries it."""
    rc, out, err = _run(
        ["timeline", "--scenario", "single-cluster-stream", "--json", "--resamples", "400"], capsys
    )
    assert rc == 0, err
    report = json.loads(out)
    assert report["theory"] == "applies"
    assert len(report["crossover"]) == 9
    for c in report["crossover"]:
        t = c["theory_crossover_time"]
        assert t is not None and math.isfinite(t)
        assert c["status"] == "unique"
        assert c["lower"] <= t <= c["upper"], c
        assert c["contains_theory"] is True
    # utility against k is an inverted U (rises, then falls) wherever the evidence needs a pass
    for g in report["by_generation"]:
        u = np.asarray(g["utility"])
        k = g["best_generation"]
        assert (np.diff(u[: k + 1]) >= -0.01).all() and (np.diff(u[k:]) <= 0.01).all()
    # U(k) beside theory's exact value (`sim._timeline.theory_by_generation`): close everywhere,
    # held by the marginal 95% intervals in most cells (k = 0: one cell shared by the operators)
    held = [ok for g in report["by_generation"] for ok in g["contains_theory"]]
    for g in report["by_generation"]:
        assert np.abs(np.asarray(g["utility"]) - g["theory_utility"]).max() < 0.03, g
    assert sum(held) >= 0.85 * len(held), held


@pytest.mark.slow
def test_single_cluster_stream_past_256_sessions_contains_theory(tmp_path, capsys):
    """MODEL §10, issue 34: past the old 256-session cap (T = 512, 1024 streams) the simulation
    still agrees with theory: each unique crossover interval holds theory's t*, retain-all's
    utility at every time (the ones past 256 included) lies within .03 of `theory.stream_curve`
    and mostly inside its interval, and U(k) at T lies within .03 of theory's exact value. Only
    the policies theory speaks of run (retain-all, periodic)."""
    from pathlib import Path

    import sim
    import theory

    preset = Path(sim.__file__).parent / "presets" / "single-cluster-stream.toml"
    path = tmp_path / "long.toml"
    text = preset.read_text(encoding="utf-8")
    assert "sessions = 48" in text
    path.write_text(text.replace("sessions = 48", "sessions = 512"), encoding="utf-8")
    argv = [
        "timeline",
        "--scenario",
        str(path),
        "--json",
        "--queries",
        "1024",
        "--policy",
        "periodic",
    ]
    rc, out, err = _run([*argv, "--resamples", "200", "--seed", "1"], capsys)
    assert rc == 0, err
    report = json.loads(out)
    assert report["sessions"] == 512 and report["theory"] == "applies"
    assert len(report["crossover"]) == 9
    # over 512 sessions dU_t is near 0 late in the stream, where noise can cross it again
    # ("multiple"); every unique crossing's interval holds theory's t*, and every first win is
    # theory's to a session
    unique = [c for c in report["crossover"] if c["status"] == "unique"]
    assert len(unique) >= 7, report["crossover"]
    for c in report["crossover"]:
        t = c["theory_crossover_time"]
        assert t is not None and math.isfinite(t), c
        assert abs(c["first_win"] - c["theory_first_win"]) <= 1, c
    for c in unique:
        t = c["theory_crossover_time"]
        assert c["contains_theory"] is True and c["lower"] <= t <= c["upper"], c
    ss = sim.load_stream(str(path))
    dist = theory.make_length_dist("exponential", mean=200.0)
    (t0,) = ss.scenario.types
    curve = theory.stream_curve(
        dist, report["budgets"], 512, compress_ratio=0.5, fidelity=0.9, acc_raw=t0.acc_raw,
        acc_guess=ss.scenario.acc_guess,
    )  # fmt: skip
    rows = [u for u in report["utility"] if u["policy"] == "retain-all"]
    assert len(rows) == len(report["budgets"])
    held = []
    for j, u in enumerate(rows):
        sim_u, th = np.asarray(u["utility"]), curve.u_ret[j]
        assert sim_u.shape == (512,)
        assert np.abs(sim_u - th).max() < 0.03, (u["budget"], np.abs(sim_u - th).max())
        held += list((np.asarray(u["lower"]) - 1e-9 <= th) & (th <= np.asarray(u["upper"]) + 1e-9))
        assert sim_u[300:].max() > 0  # the late times are simulated, not padding
    assert sum(held) >= 0.8 * len(held), sum(held) / len(held)
    for g in report["by_generation"]:
        assert np.abs(np.asarray(g["utility"]) - g["theory_utility"]).max() < 0.03, g


@pytest.mark.slow
def test_timeline_default_scenario_json(capsys):
    """`retcon timeline --json` on the default scenario: utility per policy against time with CIs
    and every operator's crossover time with its interval."""
    rc, out, err = _run(["timeline", "--json", "--queries", "256", "--resamples", "100"], capsys)
    assert rc == 0, err
    report = json.loads(out)
    assert report["scenario"] == "locomo-stream"
    policies = {u["policy"] for u in report["utility"]}
    assert policies == {"retain-all", "overflow", "periodic", "budget-aware", "tiered"}
    for u in report["utility"]:
        assert len(u["utility"]) == report["sessions"]
        assert all(lo <= m <= hi for lo, m, hi in zip(u["lower"], u["utility"], u["upper"]))
    assert {c["operator"] for c in report["crossover"]} == {"merge", "abstract", "rewrite"}
    assert "theory" in report and report["theory"].startswith("does not apply")


@pytest.mark.slow
@pytest.mark.parametrize("packing", ["prefix"])  # cut: same `before`; 30 s more
def test_linear_kernel_equals_dense_kernel(tmp_path, packing):
    """MODEL §10, §2 (packing): the level-count kernel (linear in T) gives the numbers of packing
    every unit at every time. prefix: identical; cut: kept = B - before, whose float32 sum runs in
    another order, so success probabilities agree to a few 2**-24 grid steps."""
    import dataclasses

    import jax

    import sim
    from sim._timeline import query_timeline, query_timeline_dense, stream_params

    ss = sim.load_stream(
        _stream_toml(
            tmp_path,
            "sessions = 7\ncap = 400.0\nmax_generation = 3\n"
            'session_length = {dist = "exponential", mean = 150.0}\n',
        )
    )
    ss = dataclasses.replace(ss, scenario=dataclasses.replace(ss.scenario, packing=packing))
    st, pr = stream_params(ss, ("retain-all", "periodic", "tiered", "budget-aware"))
    keys = jax.random.split(jax.random.key(3), 16)
    budgets = jax.numpy.asarray([150.0, 400.0, 900.0], jax.numpy.float32)

    def run(f):
        return [np.asarray(x) for x in jax.jit(jax.vmap(lambda k: f(k, budgets, st, pr)))(keys)]

    (a, ga), (b, gb) = run(query_timeline), run(query_timeline_dense)
    tol = 0 if packing == "prefix" else 128  # grid steps of 2**-24
    assert np.abs(a - b).max() <= tol and np.abs(ga - gb).max() <= tol
    assert len(np.unique(a)) >= 5 and (a[:, 1:] != a[:, :1]).any()  # not all at one value


def _bucket_stream(tmp_path, sessions: int, budgets, extra="", name="b", cap=400.0):
    """A small stream scenario of ``sessions`` sessions at ``budgets`` (its own file ``name``)."""
    import sim

    text = BASE.replace("budgets = [500.0, 1000.0]", f"budgets = {list(map(float, budgets))}")
    p = tmp_path / f"{name}.toml"
    p.write_text(
        text + "[stream]\n" + f"sessions = {sessions}\ncap = {cap}\nmax_generation = 3\n"
        'session_length = {dist = "exponential", mean = 150.0}\n' + extra,
        encoding="utf-8",
    )
    return sim.load_stream(str(p))


@pytest.mark.slow  # 11 s (two compilations); the trace-count test pins the bucketing fast
@pytest.mark.parametrize("packing", ["prefix", "skip"])
def test_padded_timeline_is_the_unpadded_one(tmp_path, monkeypatch, packing):
    """`simulate_timeline` compiles T and the budget count at their `bucket` (11 -> 12 sessions,
    5 -> 6 budgets) and drops the padding: the same bytes as the kernel compiled at the exact
    sizes (every time row depends on the sessions up to it; each budget on itself). MODEL §10."""
    import dataclasses

    import sim._timeline as tl

    ss = _bucket_stream(tmp_path, 11, [150.0, 300.0, 700.0, 1500.0, 3000.0])
    ss = dataclasses.replace(ss, scenario=dataclasses.replace(ss.scenario, packing=packing))
    padded = tl.simulate_timeline(ss, queries=24, seed=2)
    monkeypatch.setattr(tl, "bucket", lambda n: n)
    monkeypatch.setattr(tl, "MIN_SESSIONS", 1)
    exact = tl.simulate_timeline(ss, queries=24, seed=2)
    assert padded.outcome.shape == exact.outcome.shape == (24, len(exact.rows), 5, 11)
    assert padded.outcome.tobytes() == exact.outcome.tobytes()
    assert padded.by_generation.tobytes() == exact.by_generation.tobytes()
    assert len(np.unique(padded.outcome)) >= 5  # not all at one value
    assert (padded.outcome[..., -1] != padded.outcome[..., 0]).any()  # the last time is read


@pytest.mark.slow
def test_timeline_at_another_T_reuses_the_trace(tmp_path, monkeypatch):
    """Trace count (as the kernel's `test_jitted_kernel_compiles_once_per_shape`, counted by a
    Python side effect that runs while tracing only): a second `simulate_timeline` in the same
    process at another T and budget count in the same `bucket` (13 and 16 sessions, 5 and 6
    budgets, other cap and query count) reuses the compiled chunk; T = 17 (bucket 24) traces
    once more."""
    import sim._timeline as tl

    traces = []
    real = tl.query_timeline

    def counted(key, budgets, st, pr, sessions=None):
        traces.append((st.sessions, budgets.shape))
        return real(key, budgets, st, pr, sessions)

    monkeypatch.setattr(tl, "query_timeline", counted)
    pol = ("retain-all", "periodic", "overflow")
    extra = 'age = "oldest"\n'  # a static structure no other test compiles
    a = _bucket_stream(tmp_path, 13, [300.0, 800.0, 1200.0, 2000.0, 5000.0], extra, "a")
    r13 = tl.simulate_timeline(a, policies=pol, queries=300, seed=1)  # two chunks, one trace
    assert traces == [(16, (6,))]
    size = tl._chunk._cache_size()  # pyright: ignore[reportAttributeAccessIssue]
    b = _bucket_stream(
        tmp_path, 16, [200.0, 500.0, 900.0, 1500.0, 2500.0, 4000.0], extra, "b", cap=900.0
    )
    r16 = tl.simulate_timeline(b, policies=pol, queries=40, seed=1)
    assert traces == [(16, (6,))]
    assert tl._chunk._cache_size() == size  # pyright: ignore[reportAttributeAccessIssue]
    assert r13.outcome.shape[-2:] == (5, 13) and r16.outcome.shape[-2:] == (6, 16)
    c = _bucket_stream(tmp_path, 17, [300.0, 800.0, 1200.0, 2000.0, 5000.0], extra, "c")
    tl.simulate_timeline(c, policies=pol, queries=8, seed=1)
    assert traces == [(16, (6,)), (24, (6,))]
    # the shared draws: the first 13 times of the 16-session stream are the 13-session run's
    # (same key, same scenario but T), at the budgets both have
    a16 = _bucket_stream(tmp_path, 16, [300.0, 800.0, 1200.0, 2000.0, 5000.0], extra, "a16")
    r = tl.simulate_timeline(a16, policies=pol, queries=300, seed=1)
    assert r.outcome[..., :13].tobytes() == r13.outcome.tobytes()
