"""sim.numpy_kernel, the CPU backend of sim.simulate: its sorting network, its budget positions,
its determinism, and agreement in distribution with the JAX kernel (MODEL §2-§4)."""

import dataclasses

import jax
import numpy as np
import pytest

import sim
from retcon.errors import InputError
from sim import numpy_kernel as NK


def test_rank_order_is_the_stable_score_order():
    """MODEL §2: records are packed in score order, equal scores in slot order. The network's order
    equals a stable argsort, with ties, -0.0 against 0.0 and -inf padding."""
    rng = np.random.default_rng(0)
    n = 3000
    scores = rng.choice(np.asarray([1.0, 0.0, -0.0, 0.5, -np.inf], np.float32), size=(11, n))
    scores[:, : n // 2] = rng.standard_normal((11, n // 2)).astype(np.float32)
    ref = np.argsort(-scores, axis=0, kind="stable")
    np.testing.assert_array_equal(NK.rank_order(scores), ref)
    for n_rec in (1, 2, 5, 16):  # other list lengths
        s = rng.choice(np.asarray([1.0, 0.0, 2.0], np.float32), size=(n_rec, 200))
        np.testing.assert_array_equal(NK.rank_order(s), np.argsort(-s, axis=0, kind="stable"))


def test_positions_equal_searchsorted():
    """The bucket lookup counts the budgets below each threshold exactly (ties on a budget,
    neighbours one ulp away, 0, -0.0, +-inf, budgets closer than a bucket)."""
    rng = np.random.default_rng(1)
    for b in (
        np.geomspace(8, 1024, 29),
        np.asarray([1.0, 1.0001, 1.0002, 5.0, 1e30]),
        np.asarray([1e-40, 3.0]),
    ):
        b = np.unique(b.astype(np.float32))
        x = np.concatenate(
            [
                rng.lognormal(2, 3, 5000).astype(np.float32),
                b,
                np.nextafter(b, np.float32(np.inf)),
                np.nextafter(b, np.float32(0)),
                np.asarray([0.0, -0.0, -1.0, np.inf, -np.inf], np.float32),
            ]
        ).astype(np.float32)
        np.testing.assert_array_equal(NK.positions(b, x), np.searchsorted(b, x, side="left"))


def test_query_types_are_numpys_choice():
    """MODEL §1 (the query mix): the type draw is ``Generator.choice(4, p=weights)`` value for
    value, leaving the generator where ``choice`` leaves it (absent types of weight 0 too)."""
    for w in ([0.4, 0.25, 0.2, 0.15], [0.5, 0.0, 0.5, 0.0], [0.0, 0.0, 0.0, 1.0]):
        p = np.asarray(w) / np.sum(w)
        a, b = (NK.chunk_rng(sim.kernel.key_of_seed(7), 2) for _ in range(2))
        want = a.choice(4, size=20000, p=p)
        got = NK.query_types(b, 20000, p)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert a.random() == b.random()


def _assert_same_events(c, pr, budgets):
    b = np.unique(np.asarray(budgets, np.float32))
    table = NK.bucket_table(b)
    want = NK.events_of_frontier(NK.frontier_columns(c, pr), b, table)
    got = NK.frontier_events(c, pr, b, table)
    for name, x, y in zip(want._fields, want, got):
        np.testing.assert_array_equal(y, x, err_msg=name)


def test_closed_form_frontier_gives_the_exact_positions():
    """MODEL §2-§3 (prefix packing, G_B, H_B): the closed-form frontier (sums over slots, no
    ranking) gives the step positions of the ranked frontier exactly, also where budgets sit on
    the ranked thresholds or one ulp from them (where the closed form alone would be wrong), with
    ties between evidence and distractor scores, and for the odd queries (an empty generated
    record)."""
    s = sim.load_scenario("longmemeval-like")
    st, pr = NK.params_of(s)
    c = NK.draw_columns(NK.chunk_rng(sim.kernel.key_of_seed(5), 0), 6000, st, pr)
    exact = NK.frontier_columns(c, pr)
    approx, odd = NK.frontier_closed_form(c, pr)
    assert not odd.any()
    assert (approx.last_total != exact.last_total).any()  # the closed form rounds differently
    on = np.concatenate([exact.last_total[:, :300].ravel(), exact.first_total[:, 300:600].ravel()])
    f32 = np.float32
    hard = np.concatenate([s.budgets, on, np.nextafter(on, f32(0)), np.nextafter(on, f32(np.inf))])
    b_on = np.unique(hard.astype(f32))
    closed = NK.positions(b_on, approx.last_total)
    assert (closed != NK.positions(b_on, exact.last_total)).any()  # the re-run is needed
    _assert_same_events(c, pr, s.budgets)
    _assert_same_events(c, pr, hard)
    # ties: scores on a coarse grid, so distractors tie with evidence scores
    tied = c._replace(
        ev_score=np.where(np.isfinite(c.ev_score), np.round(c.ev_score * 2) / 2, -np.inf).astype(
            f32
        ),
        dis_score=(np.round(c.dis_score * 2) / 2).astype(f32),
    )
    _assert_same_events(tied, pr, hard)
    # an empty generated record (merge keeps nothing): outside the closed form, ranked exactly
    empty = pr._replace(compress=np.asarray([0.0, *pr.compress[1:]], f32))
    assert NK.frontier_closed_form(c, empty)[1].all()
    _assert_same_events(c, empty, hard)


def _events(c, pr, budgets):
    b = np.unique(np.asarray(budgets, np.float32))
    return NK.events_of_frontier(NK.frontier_columns(c, pr), b, NK.bucket_table(b))


@pytest.mark.parametrize("name", ["locomo-like", "longmemeval-like", "empty-merge", "r_c-one"])
def test_draws_leave_out_only_lengths_the_frontier_never_reads(name):
    """MODEL §2 (prefix packing): a record ranked after the cluster's last unit moves no packing
    threshold. ``draw_columns`` draws a length and a score for each of the cluster's records
    only, and a distractor's length only where its score passes the least evidence score (or on
    every distractor of a query outside the closed form, here an empty merged record); giving
    the skipped distractors any length leaves every step position and ``m`` of the ranked,
    exact frontier as it was."""
    from tests._sim_helpers import make_scenario

    if name == "r_c-one":  # r_c rounds to 1 for some clusters: their merged record is empty
        s = make_scenario(
            records=3, redundancy=0.99, order="noisy", noise=0.5, distractors=6,
            budgets=(1e-3, 1e4, 9),
        )  # fmt: skip
    elif name == "empty-merge":  # r_c near 1 and rho 1e-9: the merged record rounds to 0
        s = make_scenario(
            records=3, redundancy=0.99, rho=(1e-9, 1e-9, 0.5), order="noisy", noise=0.5,
            distractors=6, budgets=(1e-3, 1e4, 9),
        )  # fmt: skip
    else:
        s = sim.load_scenario(name)
    st, pr = NK.params_of(s)
    c = NK.draw_columns(NK.chunk_rng(sim.kernel.key_of_seed(11), 0), 5000, st, pr)
    cluster = np.arange(st.k_max)[:, None] < pr.records[c.query_type][None]
    assert np.array_equal(c.ev_len > 0, cluster)
    assert np.array_equal(np.isfinite(c.ev_score), cluster)
    low = np.where(cluster, c.ev_score, np.inf).min(0)
    odd = NK.frontier_closed_form(c, pr)[1]
    assert np.array_equal(c.dis_len > 0, (c.dis_score > low) | odd)
    if name in ("empty-merge", "r_c-one"):
        assert odd.mean() > 0.02
    else:
        assert not odd.any() and 0 < (c.dis_len > 0).mean() < 0.5  # most are skipped
    filled = c._replace(
        dis_len=np.where(
            c.dis_len > 0, c.dis_len, np.random.default_rng(3).lognormal(3, 1, c.dis_len.shape)
        ).astype(np.float32)
    )
    for budgets in (s.budgets, np.geomspace(1, 1e5, 200)):
        for field, x, y in zip(
            NK.Events._fields, _events(c, pr, budgets), _events(filled, pr, budgets)
        ):
            np.testing.assert_array_equal(x, y, err_msg=field)


def test_near_buckets_hold_every_threshold_the_tolerance_calls_near():
    """The closed form is re-run exactly where a threshold lies within ``closed_form_tol`` of a
    budget (MODEL §2's packing thresholds, exact positions). ``frontier_events`` checks that
    tolerance only for thresholds in ``bucket_table``'s near buckets: every threshold the
    tolerance calls near, at the largest record count, is in one, a step above and below each
    budget, across binades, and a sample far from any budget mostly is not."""
    from sim.kernel._sums import _NEAR_SHIFT

    rng = np.random.default_rng(5)
    f32 = np.float32
    # budgets a few steps inside a bucket, at its edges, on binade edges, tiny and huge
    inside = np.asarray([0x3FFFE000 + 1000, 0x40000000 + 4096 - 1050, 0x41000000 + 20], np.int32)
    for b in (
        np.geomspace(8, 1024, 29),
        np.asarray([1.0, 2.0, 4.0, 1e-30, 3e30]),
        inside.view(f32),
        [0.75],
    ):
        b = np.unique(np.asarray(b, f32))
        near = NK.bucket_table(b)[2]
        steps = np.arange(-6000, 6001, dtype=np.int64)
        x = (b.view(np.int32).astype(np.int64)[:, None] + steps[None]).ravel()
        x = np.concatenate(
            [x[x >= 0].astype(np.int32).view(f32), rng.lognormal(3, 4, 20000).astype(f32)]
        )
        edge = np.concatenate([[-np.inf], b, [np.inf]]).astype(f32)
        pos = NK.positions(b, x)
        tol = x * NK.closed_form_tol(16 + 256)  # _NEAR_RECORDS
        called = (x - edge[pos] <= tol) | (edge[pos + 1] - x <= tol)
        flagged = near[
            (x.view(np.int32) >> _NEAR_SHIFT).astype(np.intp) + (1 << (31 - _NEAR_SHIFT))
        ]
        assert called.any() and not (called & ~flagged).any()
        assert flagged[-20000:].mean() < 0.2


def test_closed_form_past_the_near_buckets_record_count_checks_every_threshold():
    """Columns of more records than the near buckets are sized for (``_NEAR_RECORDS``; a
    scenario has at most 16 + 256) get the tolerance checked at every threshold: the positions
    stay the exact ones (MODEL §2), budgets on the thresholds included."""
    from sim.kernel._sums import _NEAR_RECORDS

    s = sim.load_scenario("locomo-like")
    st, pr = NK.params_of(s)
    c = NK.draw_columns(NK.chunk_rng(sim.kernel.key_of_seed(2), 0), 2000, st, pr)
    extra = _NEAR_RECORDS + 1 - c.dis_len.shape[0] - c.ev_len.shape[0]
    rng = np.random.default_rng(0)
    wide = c._replace(
        dis_len=np.concatenate([c.dis_len, rng.lognormal(3, 0.5, (extra, 2000))]).astype(
            np.float32
        ),
        dis_score=np.concatenate([c.dis_score, rng.normal(-1, 0.5, (extra, 2000))]).astype(
            np.float32
        ),
    )
    exact = NK.frontier_columns(wide, pr)
    on = np.concatenate([exact.last_total.ravel(), exact.first_total.ravel()])
    hard = np.concatenate([s.budgets, on, np.nextafter(on, np.float32(0))])
    _assert_same_events(wide, pr, hard)


def test_numpy_backend_same_key_same_bytes_and_exact_partition():
    """Same key, same bytes; another key, other numbers; C + R = dU exactly (MODEL §4)."""
    s = sim.load_scenario("locomo-like")
    a = sim.simulate(jax.random.key(1), s, 3000, backend="numpy")
    b = sim.simulate(jax.random.key(1), s, 3000, backend="numpy")
    c = sim.simulate(jax.random.key(2), s, 3000, backend="numpy")
    for x, y in zip(a, b):
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()
    assert not np.array_equal(a.delta, c.delta)
    assert np.array_equal(a.coverage + a.replacement, a.delta)
    assert int(a.block_count.sum()) == 3000


def test_backend_choice_and_errors():
    s = sim.load_scenario("locomo-like")
    cpu = jax.default_backend() == "cpu"
    assert sim.choose_backend(s) == ("numpy" if cpu else "jax")
    assert sim.choose_backend(dataclasses.replace(s, packing="skip")) == "jax"
    with pytest.raises(InputError, match="backend 'numpy' runs prefix packing"):
        sim.simulate(jax.random.key(0), dataclasses.replace(s, packing="cut"), 10, backend="numpy")
    with pytest.raises(InputError, match="backend must be one of"):
        sim.simulate(jax.random.key(0), s, 10, backend="torch")


def _z_scores(a, b) -> np.ndarray:
    """``(x_a - x_b) / SE`` for utility, dU, the G_B share and the H_B shares, all budgets."""
    n_a, n_b = a.n_queries, b.n_queries

    def share(p, n):
        return p, np.sqrt(np.maximum(p * (1 - p), 1.0 / n) / n)

    z = []
    for x, y in (
        ((a.utility, a.utility_se), (b.utility, b.utility_se)),
        ((a.delta, a.delta_se), (b.delta, b.delta_se)),
        (share(a.raw_grounded, n_a), share(b.raw_grounded, n_b)),
        (share(a.affected, n_a), share(b.affected, n_b)),
    ):
        z.append(((x[0] - y[0]) / np.sqrt(x[1] ** 2 + y[1] ** 2 + 1e-18)).ravel())
    return np.concatenate(z)


@pytest.mark.slow
def test_backends_agree_in_distribution():
    """MODEL §2-§4: the numpy and JAX kernels simulate the same model. Over two seeds, every
    utility, dU, G_B share and H_B share at every budget (319 numbers a seed) agrees within 5 standard
    errors (about 1e-4 false alarms under the null); a numpy run of a model whose multi-hop reader
    accuracy is 0.05 higher, or whose cluster redundancy is 0.15 higher, is caught."""
    s = sim.load_scenario("locomo-like")
    n = 131072
    mh = [t.name for t in s.types].index("multi-hop")
    more_acc = dataclasses.replace(
        s,
        types=tuple(
            dataclasses.replace(t, acc_raw=t.acc_raw + 0.05) if i == mh else t
            for i, t in enumerate(s.types)
        ),
    )
    more_red = dataclasses.replace(
        s,
        types=tuple(
            dataclasses.replace(t, redundancy=t.redundancy + 0.15) if i == mh else t
            for i, t in enumerate(s.types)
        ),
    )
    worst, caught = [], []
    for seed in (0, 1):
        key = jax.random.key(seed)
        j = sim.simulate(key, s, n, backend="jax", progress=False)
        worst.append(np.abs(_z_scores(sim.simulate(key, s, n, backend="numpy"), j)).max())
        for biased in (more_acc, more_red):
            caught.append(np.abs(_z_scores(sim.simulate(key, biased, n, backend="numpy"), j)).max())
    assert max(worst) < 5.0, worst
    assert min(caught) > 5.0, caught
