"""The project's own Hypothesis strategies for the single-cluster model (MODEL §6).

Used by tests/theory/test_theory_crossover.py and by the examples of docs/testing.md: length
distributions (``NICE``: families whose elasticity is non-increasing, MODEL §6.4; ``ANY``: those
and point masses) as ``(name, params)`` specs for ``theory.make_length_dist`` (``dist_of``), and
readers ``(phi, a, g)`` with ``g < a phi < a`` (``readers``).
"""

from hypothesis import strategies as st

import theory


def shape_scale(name: str, low: float, high: float):
    """``(name, {"shape": k, "scale": s})`` specs: a shape in ``[low, high]``, a scale in
    ``[5, 2000]`` tokens (gamma and Weibull laws, MODEL §6)."""
    return st.builds(
        lambda k, s: (name, {"shape": k, "scale": s}), st.floats(low, high), st.floats(5.0, 2e3)
    )


# Families whose elasticity x f(x)/F(x) is non-increasing (docs/model.md §6.4).
NICE = st.one_of(
    st.builds(lambda m: ("exponential", {"mean": m}), st.floats(5.0, 5e3)),
    st.builds(lambda m: ("uniform", {"max": m}), st.floats(5.0, 5e3)),
    shape_scale("gamma", 1.0, 6.0),
    shape_scale("weibull", 1.0, 5.0),
    st.builds(
        lambda sg, s: ("lognormal", {"sigma": sg, "scale": s}),
        st.floats(0.2, 2.0),
        st.floats(5.0, 2e3),
    ),
)
ANY = st.one_of(NICE, st.builds(lambda m: ("point", {"length": m}), st.floats(5.0, 5e3)))


@st.composite
def readers(draw, w_lo=0.05, w_hi=0.95):
    """(phi, a, g) with g < a phi < a; kappa = 1/w."""
    a = draw(st.floats(0.3, 1.0))
    g = draw(st.floats(0.0, 0.9)) * a
    w = draw(st.floats(w_lo, w_hi))
    phi = (g + w * (a - g)) / a
    return phi, a, g


def dist_of(spec):
    name, params = spec
    return theory.make_length_dist(name, **params)
