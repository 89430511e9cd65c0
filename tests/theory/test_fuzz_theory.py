"""Hypothesis fuzz of theory's public entry points (issue 35, item 6).

Every call gets arbitrary arguments: floats (NaN, +-inf, negative, zero, subnormal, huge), ints
(negative, zero, huge), wrong types (None, strings, lists, nested arrays, objects) and wrong
shapes. The contract: the call either returns a documented result whose numbers are finite
(NaN, inf or ``None`` only in the fields whose docstrings say so) or raises `InputError` with one
line that opens with the function's name (``crossover: compress_ratio must ...``). Any other
exception, any numpy warning (turned into an error here), and a NaN result without an error fail.

The size of the work a call may ask for is bounded by the input checks (``n_log``, ``horizon``,
``per_octave``, ``passes``, ``n`` are capped), so huge counts are refused rather than run; the
strategies include them. ``reader_success`` is left out: it is a formula over floats, numpy and
jax arrays and sympy symbols (MODEL §2), validated by its callers.

The fast tier draws a few examples per function; ``@pytest.mark.slow`` draws many more.
References: MODEL §2, §6, §10.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import theory
from retcon.errors import InputError
from theory._grid import sign_changes

EDGES = [
    0.0,
    -0.0,
    1e-300,
    5e-324,
    1e300,
    1.7976931348623157e308,
    -1.0,
    0.1,
    0.3,
    0.5,
    0.9,
    1.0,
    2.0,
]
WEIRD = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.booleans(),
    st.just([0.5, 0.2]),
    st.just(np.array([[0.5], [0.2]])),
    st.just(np.array([])),
    st.just(object()),
    st.just(1 + 2j),
)
REALS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(EDGES),
    st.floats(0.0, 1.0),
)
SCALARS = st.one_of(REALS, REALS, st.integers(-(10**20), 10**20), WEIRD)
COUNTS = st.one_of(
    st.sampled_from([-1, 0, 1, 2, 3, 5, 10**7, 10**12, 2**63]),
    st.sampled_from([1.5, 4.0, math.nan, math.inf]),
    WEIRD,
)
BUDGETS = st.one_of(
    st.lists(REALS, min_size=1, max_size=4),
    st.just([10.0, 100.0, 1000.0]),
    st.just([1e-300, 1e300]),
    REALS,
    WEIRD,
)
CURVES = st.one_of(
    st.lists(st.one_of(REALS, st.integers(-3, 3)), min_size=0, max_size=5),
    st.just([1.0, -1.0, -2.0]),
    REALS,
    WEIRD,
)
DISTS = st.one_of(
    st.sampled_from(
        [
            theory.make_length_dist("point", length=100.0),
            theory.make_length_dist("uniform", max=200.0),
            theory.make_length_dist("exponential", mean=100.0),
            theory.make_length_dist("gamma", shape=0.5, scale=10.0),
            theory.make_length_dist("lognormal", sigma=3.0, scale=1e-300),
            theory.make_length_dist("weibull", shape=5.0, scale=1e300),
            theory.empirical_lengths([3.0, 5.0, 5.0, 1e6]),
        ]
    ),
    WEIRD,
    REALS,
)
FAMILIES = st.one_of(st.sampled_from(list(theory.DIST_PARAMS)), st.just("empirical"), WEIRD)
MODEL = {
    "compress_ratio": SCALARS,
    "fidelity": SCALARS,
    "acc_raw": SCALARS,
    "acc_guess": SCALARS,
}
AGE = st.one_of(st.sampled_from(theory.AGE_LAWS), WEIRD)


def _dist_params(data):
    return {
        p: data.draw(SCALARS, label=p)
        for p in data.draw(
            st.sampled_from(
                [("length",), ("max",), ("mean",), ("shape", "scale"), ("sigma", "scale")]
            )
        )
    }


#: name -> (function, positional strategies, keyword strategies, what the result may hold).
#: ``nan``/``inf``/``None`` in the last entry: the docstring documents them for that function.
CASES: dict[str, tuple[Callable, tuple, dict, frozenset]] = {
    "crossover": (theory.crossover, (DISTS,), MODEL, frozenset({"inf", "None"})),
    "closed_form_crossover": (theory.closed_form_crossover, (DISTS,), MODEL, frozenset({"None"})),
    "tight_budget_condition": (
        theory.tight_budget_condition,
        (DISTS,),
        MODEL,
        frozenset({"inf"}),
    ),
    "loose_budget_limit": (
        theory.loose_budget_limit,
        (),
        {k: MODEL[k] for k in ("fidelity", "acc_raw", "acc_guess")},
        frozenset(),
    ),
    "kappa": (theory.kappa, (SCALARS, SCALARS, SCALARS), {}, frozenset({"inf"})),
    "delta_curve": (theory.delta_curve, (DISTS, BUDGETS), MODEL, frozenset()),
    "grid_bias": (theory.grid_bias, (DISTS, BUDGETS), MODEL, frozenset({"nan"})),
    "scan_budgets": (theory.scan_budgets, (DISTS, SCALARS), {"n_log": COUNTS}, frozenset()),
    "elasticity_nonincreasing": (
        theory.elasticity_nonincreasing,
        (DISTS,),
        {"n": COUNTS, "rtol": SCALARS},
        frozenset(),
    ),
    "grid_crossover": (theory.grid_crossover, (BUDGETS, CURVES), {}, frozenset({"nan"})),
    "sign_changes": (sign_changes, (CURVES,), {}, frozenset()),
    "octave_grid": (theory.octave_grid, (SCALARS, SCALARS, COUNTS), {}, frozenset()),
    "crossover_time": (
        theory.crossover_time,
        (DISTS, BUDGETS),
        {**MODEL, "age_law": AGE, "horizon": COUNTS},
        frozenset({"nan"}),
    ),
    "point_mass_crossover_time": (
        theory.point_mass_crossover_time,
        (SCALARS, SCALARS),
        {"compress_ratio": SCALARS, "fidelity": SCALARS, "age_law": AGE},
        frozenset({"None"}),
    ),
    "best_generation": (
        theory.best_generation,
        (DISTS, BUDGETS),
        {**MODEL, "max_generation": COUNTS},
        frozenset({"nan"}),
    ),
    "closed_form_best_generation": (
        theory.closed_form_best_generation,
        (DISTS, BUDGETS),
        MODEL,
        frozenset({"nan"}),
    ),
    "generation_utility": (
        theory.generation_utility,
        (DISTS, BUDGETS, CURVES),
        MODEL,
        frozenset(),
    ),
    "stream_curve": (
        theory.stream_curve,
        (DISTS, BUDGETS, COUNTS),
        {**MODEL, "age_law": AGE},
        frozenset(),
    ),
    "first_positive_time": (theory.first_positive_time, (CURVES,), {}, frozenset({"nan"})),
    "sum_cdf": (theory.sum_cdf, (DISTS, COUNTS, SCALARS), {}, frozenset()),
    "h10_chain": (theory.h10_chain, (SCALARS, SCALARS, COUNTS), {}, frozenset()),
    "stream_generation_utility": (
        theory.stream_generation_utility,
        (DISTS, BUDGETS, COUNTS),
        {"support": CURVES, "ratio": CURVES, "age_law": AGE},
        frozenset(),
    ),
    "stream_best_generation": (
        theory.stream_best_generation,
        (DISTS, BUDGETS, COUNTS),
        {"support": CURVES, "ratio": CURVES, "age_law": AGE},
        frozenset(),
    ),
    "empirical_lengths": (theory.empirical_lengths, (CURVES,), {}, frozenset()),
}


#: Functions that check their arguments through another public function, whose name the message
#: then carries (their docstrings say which one they evaluate).
DELEGATES: dict[str, tuple[str, ...]] = {
    "best_generation": ("generation_utility",),
    "crossover_time": ("stream_curve",),
    "grid_bias": ("crossover", "delta_curve", "grid_crossover"),
    "stream_best_generation": ("stream_generation_utility",),
}


def _numbers(value, path="result"):
    """Yield ``(path, float)`` for every number inside a result (NamedTuples, tuples, arrays)."""
    if value is None or isinstance(value, (str, bool)):
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, f"{path}[{k!r}]")
    elif isinstance(value, tuple) and (fields := getattr(value, "_fields", ())):
        for k in fields:
            yield from _numbers(getattr(value, k), f"{path}.{k}")
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{path}[{i}]")
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "fiu":
            for x in value.reshape(-1).tolist():
                yield path, float(x)
    elif isinstance(value, (int, float, np.number)):
        yield path, float(value)
    elif isinstance(value, theory.LengthDist):
        yield from _numbers(value.params, f"{path}.params")
    else:
        raise AssertionError(f"{path}: undocumented result type {type(value).__name__}")


def _check_call(name: str, func: Callable, args: tuple, kwargs: dict, allowed: frozenset) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out = func(*args, **kwargs)
        except InputError as e:
            msg = str(e)
            assert "\n" not in msg, f"{name}: a multi-line message: {msg!r}"
            heads = (name, *DELEGATES.get(name, ()))
            assert any(msg.startswith((f"{h}: ", f"{h}(", f"{h}.")) for h in heads), (
                f"{name}: the message does not open with the function's name: {msg!r}"
            )
            return
    if out is None:
        assert "None" in allowed, f"{name} returned None (not documented)"
    for path, x in _numbers(out):
        if math.isnan(x):
            assert "nan" in allowed, f"{name}: {path} is NaN without an error"
        elif math.isinf(x):
            assert "inf" in allowed, f"{name}: {path} is infinite without an error"


def _fuzz(name: str, data) -> None:
    func, pos, kw, allowed = CASES[name]
    args = tuple(data.draw(s, label=f"arg{i}") for i, s in enumerate(pos))
    kwargs = {k: data.draw(s, label=k) for k, s in kw.items()}
    _check_call(name, func, args, kwargs, allowed)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=12, deadline=None, database=None)
@given(data=st.data())
def test_fuzz_theory_fast(name, data):
    _fuzz(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_fuzz_theory_slow(name, data):
    _fuzz(name, data)


@pytest.mark.parametrize("family", sorted(theory.DIST_PARAMS))
@settings(max_examples=12, deadline=None, database=None)
@given(data=st.data())
def test_fuzz_make_length_dist(family, data):
    params = {p: data.draw(SCALARS, label=p) for p in theory.DIST_PARAMS[family]}
    if data.draw(st.booleans(), label="extra"):
        params["shape"] = data.draw(SCALARS, label="shape")
    _check_call("make_length_dist", theory.make_length_dist, (family,), params, frozenset())


@settings(max_examples=12, deadline=None, database=None)
@given(name=FAMILIES, data=st.data())
def test_fuzz_make_length_dist_names(name, data):
    _check_call(
        "make_length_dist", theory.make_length_dist, (name,), _dist_params(data), frozenset()
    )


def _extreme_law(family: str, data) -> theory.LengthDist | None:
    """A law of ``family`` from drawn parameters (extreme floats included); None when refused."""
    params = {
        p: data.draw(st.one_of(REALS, st.sampled_from(EDGES)), label=p)
        for p in theory.DIST_PARAMS[family]
    }
    try:
        return theory.make_length_dist(family, **params)
    except InputError:
        return None


@pytest.mark.parametrize("family", sorted(theory.DIST_PARAMS))
@settings(max_examples=12, deadline=None, database=None)
@given(data=st.data())
def test_fuzz_length_dist_summaries(family, data):
    """A law built from extreme valid parameters: ``mean`` and ``tail_exponent`` are numbers
    (``inf`` documented: a mean that overflows, a tail faster than any power), ``scaled`` checks
    its factor."""
    dist = _extreme_law(family, data)
    if dist is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for value in (dist.mean, dist.tail_exponent):
            assert isinstance(value, float) and not math.isnan(value), (dist, value)
    _check_call("LengthDist.scaled", dist.scaled, (data.draw(SCALARS, label="s"),), {}, frozenset())


def test_weibull_mean_of_a_subnormal_shape_is_inf():
    """MODEL §6.3's length laws: the Weibull mean ``scale Gamma(1 + 1/shape)`` of a subnormal
    shape passes every float; ``mean`` says ``inf`` (as for a huge lognormal sigma), where
    ``math.lgamma`` raised ``OverflowError`` (found by the fuzz above)."""
    dist = theory.make_length_dist("weibull", shape=1.1125369292536007e-308, scale=1.0)
    assert dist.mean == math.inf
    assert theory.make_length_dist("weibull", shape=2.0, scale=1.0).mean == pytest.approx(
        math.gamma(1.5)
    )


# --- the cases issue 35 names, pinned -------------------------------------------------------

KW = dict(fidelity=0.85, acc_raw=0.9, acc_guess=0.1)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (
            lambda: theory.closed_form_crossover(
                theory.make_length_dist("exponential", mean=100.0), compress_ratio=1e-300, **KW
            ),
            "closed_form_crossover: compress_ratio",
        ),
        (
            lambda: theory.closed_form_crossover(
                theory.make_length_dist("exponential", mean=100.0), compress_ratio=math.nan, **KW
            ),
            "closed_form_crossover: compress_ratio",
        ),
        (
            lambda: theory.closed_form_crossover("exponential", compress_ratio=0.5, **KW),
            "closed_form_crossover: dist",
        ),
        (lambda: theory.octave_grid(5e-324, 2.0, 1), "octave_grid: per_octave"),
        (lambda: theory.octave_grid(1.0, 1e300, 4), "octave_grid: high"),
        (lambda: theory.octave_grid(1.0, 2.0**40, 10**9), "octave_grid: per_octave"),
        (lambda: theory.h10_chain(1.5, math.inf, 3), "h10_chain: fidelity"),
        (lambda: theory.h10_chain(0.5, 1.5, 10**5), "h10_chain: fidelity"),
        (
            lambda: theory.sum_cdf(theory.make_length_dist("uniform", max=1.0), 10**6, 1.0),
            "sum_cdf: n",
        ),
        (
            lambda: theory.sum_cdf(theory.make_length_dist("point", length=1.0), "x", 1.0),
            "sum_cdf: n",
        ),
        (lambda: sign_changes(math.nan), "sign_changes: values"),
        (lambda: theory.first_positive_time("x"), "first_positive_time: delta"),
        (
            lambda: theory.scan_budgets(
                theory.make_length_dist("point", length=1.0), 0.5, n_log=-1
            ),
            "scan_budgets: n_log",
        ),
        (
            lambda: theory.elasticity_nonincreasing(
                theory.make_length_dist("gamma", shape=2.0, scale=1.0), n=0
            ),
            "elasticity_nonincreasing: n",
        ),
        (
            lambda: theory.tight_budget_condition(math.nan, compress_ratio=0.5, **KW),
            "tight_budget_condition: dist",
        ),
    ],
)
def test_issue_35_cases_refused_in_one_line(call, needle):
    with pytest.raises(InputError) as err:
        call()
    msg = str(err.value)
    assert msg.startswith(needle), msg
    assert "\n" not in msg


def test_closed_form_crossover_unchanged_on_valid_inputs():
    # The checks change no answer on valid inputs: the exponential closed form at rho = 1/3 and
    # the largest order it solves still agree with the bracketing search.
    dist = theory.make_length_dist("exponential", mean=100.0)
    for rho in (1.0 / 3.0, 1.0 / 64.0):
        cf = theory.closed_form_crossover(dist, compress_ratio=rho, **KW)
        num = theory.crossover(dist, compress_ratio=rho, **KW).crossover_budget
        assert cf is not None and num is not None
        assert cf == pytest.approx(num, rel=1e-9)


# --- the law's CDF and the section-2 reader ---------------------------------------------------


@pytest.mark.parametrize("family", sorted(theory.DIST_PARAMS))
@settings(max_examples=12, deadline=None, database=None)
@given(data=st.data())
def test_fuzz_length_dist_cdf(family, data):
    """``LengthDist.cdf`` of a law built from extreme valid parameters, at any floats (NaN,
    +-inf, subnormal, huge, negative): values in [0, 1], non-decreasing in ``x``, never NaN where
    ``x`` is a number (a NaN ``x`` is the caller's to refuse), no numpy warning; a string is
    refused with ``InputError`` or ``ValueError``."""
    dist = _extreme_law(family, data)
    if dist is None:
        return
    xs = data.draw(st.lists(REALS, min_size=1, max_size=6), label="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = np.asarray(dist.cdf(np.asarray(xs, dtype=np.float64)), dtype=np.float64)
    x = np.asarray(xs, dtype=np.float64)
    assert got.shape == x.shape
    ok = ~np.isnan(x)
    assert not np.any(np.isnan(got[ok])), (dist, xs, got)
    # scipy's gammainc gives 1 + 2**-52 at a tiny shape (1e-20): one ulp past 1 is tolerated,
    # not clipped, so the values of valid runs keep their bits
    assert np.all((got[ok] >= 0.0) & (got[ok] <= 1.0 + 2**-50)), (dist, xs, got)
    order = np.argsort(x[ok], kind="stable")
    assert np.all(np.diff(got[ok][order]) >= 0.0), (dist, xs, got)
    with pytest.raises((InputError, ValueError)):
        dist.cdf("x")


@settings(max_examples=40, deadline=None, database=None)
@given(
    s=st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 5e-324, 1e300, 1.7976931348623157e308])),
    a=st.one_of(st.floats(0.0, 1.0), st.sampled_from(EDGES[:4])),
    g=st.one_of(st.floats(0.0, 1.0), st.sampled_from(EDGES[:4])),
)
def test_fuzz_reader_success(s, a, g):
    """``reader_success`` over its documented range (support in [0, inf), accuracies in
    [0, 1]): finite, in [0, 1], the same for a float and a numpy array (MODEL §2). Outside that
    range it is a formula its callers validate (module docstring)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = theory.reader_success(s, a, g)
        arr = theory.reader_success(np.array([s]), a, g)
    assert math.isfinite(p) and 0.0 <= p <= 1.0, (s, a, g, p)
    assert float(np.asarray(arr).reshape(-1)[0]) == p
