"""Distributions of a cluster's raw length ``L`` (tokens): CDF, quantiles, JAX sampling, scaling.

One small class covers the six parametric families of the CLI and an empirical sample, so the
crossover code needs only ``cdf``, ``ppf`` and the tail exponent ``k`` (``F(x) ~ c x^k`` near 0).
Parametrisations follow scipy.stats: ``lognormal(sigma, scale)`` is ``scale * exp(sigma Z)``,
``gamma(shape, scale)`` and ``weibull(shape, scale)`` as scipy's ``gamma`` and ``weibull_min``.
The CDF, quantiles, log-density and mean are each family's closed form in numpy (with
``scipy.special``'s incomplete gamma and normal integral for ``gamma`` and ``lognormal``, imported
when first needed), so the crossover path does not import ``scipy.stats`` (about 0.3 s);
tests/theory/test_theory_formulas.py checks every one against scipy.stats.
References: docs/model.md §6 (``L ~ F``), §6.3 (tail exponent), §6.5 (scaling).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from retcon.errors import InputError, Spell
from theory._checks import (
    DIST_PARAMS,
    DIST_SCALE_PARAM,
    check_dist_params,
    check_sample,
    check_scale,
)


@dataclasses.dataclass(frozen=True, eq=False)
class LengthDist:
    """The law ``F`` of a cluster's raw length ``L`` in tokens.

    Attributes:
      name: ``point``, ``uniform``, ``exponential``, ``gamma``, ``lognormal``, ``weibull`` or
        ``empirical``.
      params: the family's parameters (tokens for lengths); for ``empirical``, ``{"n": size}``.
    """

    name: str
    params: dict
    _sample: np.ndarray | None = dataclasses.field(default=None, repr=False)

    def observed(self) -> np.ndarray:
        """The sorted sample of an ``empirical`` law (tokens)."""
        if self._sample is None:
            raise AttributeError(f"{self.name} length distribution has no sample")
        return self._sample

    @property
    def continuous(self) -> bool:
        """Whether ``F`` has a density (the setting of docs/model.md §6.4)."""
        return self.name not in ("point", "empirical")

    @property
    def mean(self) -> float:
        """``E[L]`` in tokens; ``inf`` when it overflows a float (extreme parameters)."""
        if self.name == "point":
            return self.params["length"]
        if self.name == "empirical":
            return float(self.observed().mean())
        p = self.params
        if self.name == "uniform":
            return p["max"] / 2.0
        if self.name == "exponential":
            return p["mean"]
        if self.name == "gamma":
            return p["shape"] * p["scale"]
        # lognormal: scale exp(sigma^2 / 2); weibull: scale Gamma(1 + 1/shape); inf on overflow
        with np.errstate(over="ignore"):  # a huge sigma overflows sigma^2 too: inf, no error
            if self.name == "lognormal":
                log_mean = np.float64(p["sigma"]) ** 2 / 2.0
            else:
                try:
                    log_mean = math.lgamma(1.0 + 1.0 / p["shape"])
                except OverflowError:  # a subnormal shape: Gamma(1 + 1/shape) passes any float
                    log_mean = math.inf
            return float(p["scale"] * np.exp(log_mean))

    @property
    def tail_exponent(self) -> float:
        """``k`` with ``F(x) ~ c x^k`` as ``x -> 0``; ``inf`` when ``F`` vanishes faster than any power.

        The point mass and an empirical sample put no mass below their smallest length, and the
        lognormal CDF decays like ``exp(-(ln x)^2)``: for all three ``rho^(-k) = inf``.
        References: docs/model.md §6.3.
        """
        if self.name in ("uniform", "exponential"):
            return 1.0
        if self.name in ("gamma", "weibull"):
            return float(self.params["shape"])
        return math.inf

    # --- numpy ------------------------------------------------------------------------------
    def cdf(self, x) -> np.ndarray:
        """``F(x)`` as float64, right-continuous, shape of ``x`` (tokens). A length past the
        float range in scale units (``x / scale`` overflows) has ``F = 1``, without a warning."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(over="ignore"):  # x / scale -> inf: F = 1 exactly, as the formulas give
            return self._cdf(x)

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        p = self.params
        if self.name == "point":
            return (x >= p["length"]).astype(np.float64)
        if self.name == "empirical":
            sample = self.observed()
            return np.searchsorted(sample, x, side="right") / sample.size
        if self.name == "uniform":
            return np.clip(x / p["max"], 0.0, 1.0)
        t = np.maximum(x, 0.0) / p[DIST_SCALE_PARAM[self.name]]  # standardized length
        if self.name == "exponential":
            return -np.expm1(-t)
        if self.name == "weibull":
            return -np.expm1(-(t ** p["shape"]))
        import scipy.special as sc

        if self.name == "gamma":
            return np.asarray(sc.gammainc(p["shape"], t), dtype=np.float64)
        with np.errstate(divide="ignore"):  # lognormal; log(0) = -inf gives F = 0
            return np.asarray(sc.ndtr(np.log(t) / p["sigma"]), dtype=np.float64)

    def pdf(self, x) -> np.ndarray:
        """The density ``f(x)`` (continuous families only), shape of ``x``."""
        return np.exp(self.logpdf(x))

    def logpdf(self, x) -> np.ndarray:
        """``log f(x)`` (continuous families only; ``-inf`` where ``f = 0``), shape of ``x``."""
        x = np.asarray(x, dtype=np.float64)
        p = self.params
        if self.name == "uniform":
            inside = (x >= 0.0) & (x <= p["max"])
            return np.where(inside, -math.log(p["max"]), -np.inf)
        if not self.continuous:
            raise AttributeError(f"{self.name} length distribution has no density")
        scale = p[DIST_SCALE_PARAM[self.name]]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = x / scale
            log_t = np.log(t)
            if self.name == "exponential":
                out = -t - math.log(scale)
            elif self.name == "weibull":
                k = p["shape"]
                out = math.log(k / scale) + (k - 1.0) * log_t - t**k
            elif self.name == "gamma":
                k = p["shape"]
                out = (k - 1.0) * log_t - t - math.lgamma(k) - math.log(scale)
            else:  # lognormal
                sigma = p["sigma"]
                z = log_t / sigma
                out = -0.5 * z * z - np.log(x * sigma) - 0.5 * math.log(2.0 * math.pi)
            return np.where(x > 0.0, out, -np.inf)

    def logcdf(self, x) -> np.ndarray:
        """``log F(x)`` (continuous families only), accurate in the lower tail, shape of ``x``."""
        x = np.asarray(x, dtype=np.float64)
        if not self.continuous:
            raise AttributeError(f"{self.name} length distribution has no density")
        with np.errstate(divide="ignore"):
            if self.name == "lognormal":
                import scipy.special as sc

                z = np.log(np.maximum(x, 0.0) / self.params["scale"]) / self.params["sigma"]
                return np.asarray(sc.log_ndtr(z), dtype=np.float64)
            return np.log(self.cdf(x))

    def ppf(self, p) -> np.ndarray:
        """Quantiles ``F^-1(p)`` in tokens for probabilities ``p`` in ``(0, 1)``."""
        p = np.asarray(p, dtype=np.float64)
        par = self.params
        if self.name == "point":
            return np.full(p.shape, par["length"])
        if self.name == "empirical":
            return np.quantile(self.observed(), p, method="inverted_cdf")
        scale = par[DIST_SCALE_PARAM[self.name]]
        if self.name == "uniform":
            return p * scale
        if self.name == "exponential":
            return -np.log1p(-p) * scale
        if self.name == "weibull":
            return (-np.log1p(-p)) ** (1.0 / par["shape"]) * scale
        import scipy.special as sc

        if self.name == "gamma":
            return np.asarray(sc.gammaincinv(par["shape"], p), dtype=np.float64) * scale
        return np.exp(par["sigma"] * np.asarray(sc.ndtri(p), dtype=np.float64)) * scale

    def elasticity(self, x) -> np.ndarray:
        """``e(x) = x f(x) / F(x)`` (continuous families only). References: docs/model.md §6.4."""
        x = np.asarray(x, dtype=np.float64)
        logf = self.logpdf(x)
        logF = self.logcdf(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return np.where(np.isfinite(logf), np.exp(np.log(x) + logf - logF), 0.0)

    # --- jax --------------------------------------------------------------------------------
    def sample(self, key, shape=()):
        """Draw lengths ``L ~ F`` (tokens) with the JAX key ``key``; returns a jax array of ``shape``."""
        import jax
        import jax.numpy as jnp

        from theory._sampling import sample_lengths

        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
        if self.name == "empirical":
            return jax.random.choice(key, jnp.asarray(self.observed()), shape)
        p = [self.params[k] for k in DIST_PARAMS[self.name]]
        return sample_lengths(key, self.name, p[0], p[1] if len(p) > 1 else 0.0, shape)

    # --- transformations --------------------------------------------------------------------
    def scaled(self, s: float) -> LengthDist:
        """The law of ``s L`` (tokens). References: docs/model.md §6.5."""
        s = check_scale(s)
        if self.name == "empirical":
            scaled = self.observed() * s
            # the largest length may overflow, the smallest underflow to 0
            top = float(scaled.max()) if scaled.min() > 0 else 0.0
            params = dict(self.params)
        else:
            key = DIST_SCALE_PARAM[self.name]
            top = self.params[key] * s
            params = {**self.params, key: top}
        if math.isinf(top) or top == 0.0:
            raise InputError(
                f"LengthDist.scaled(s): s={s:g} takes {self.describe()} outside the finite "
                f"positive floats; got a scale of {top:g}."
            )
        if self.name == "empirical":
            return LengthDist("empirical", params, scaled)
        return LengthDist(self.name, params)

    def describe(self) -> str:
        """``exponential(mean=300)``."""
        return f"{self.name}(" + ", ".join(f"{k}={v:g}" for k, v in self.params.items()) + ")"


_MAKE_SPELL = Spell("make_length_dist", py={"dist": "name"})


def make_length_dist(name: str, **params: float | None) -> LengthDist:
    """Build a raw-length distribution by name with its CLI parameters.

    Args:
      name: ``point`` (``length``), ``uniform`` (``max``: ``U(0, max)``), ``exponential``
        (``mean``), ``gamma`` (``shape``, ``scale``), ``lognormal`` (``sigma``, ``scale``),
        ``weibull`` (``shape``, ``scale``); lengths in tokens. Parameters set to ``None`` count as
        not given.

    Returns:
      LengthDist.

    Raises:
      InputError: unknown name, missing, extra or non-positive parameter.

    References: docs/model.md §6.
    """
    name, checked = check_dist_params(name, params, spell=_MAKE_SPELL)
    return LengthDist(name, checked)


def empirical_lengths(sample) -> LengthDist:
    """The empirical law of observed raw cluster lengths (tokens), e.g. measured on LoCoMo.

    Args:
      sample: array-like of positive lengths, any shape (flattened).

    Returns:
      LengthDist with a right-continuous step CDF.

    References: docs/model.md §6, §9.
    """
    arr = np.sort(check_sample(sample))
    arr.setflags(write=False)
    return LengthDist("empirical", {"n": int(arr.size)}, arr)


def check_dist(dist, spell: Spell, needs: tuple[str, ...] = ("name", "params", "cdf")):
    """``dist`` itself when it is a `LengthDist` or has the attributes ``needs`` (a duck-typed
    law); else `InputError` naming the argument.

    ``spell``: the `Spell` of the public function checked (``crossover: dist``); ``needs``: what
    that function reads of ``dist``.
    """
    if not isinstance(dist, LengthDist) and not all(hasattr(dist, a) for a in needs):
        raise InputError(
            f"{spell.lead('dist')} must be a theory.LengthDist (from make_length_dist or "
            f"empirical_lengths); got {type(dist).__name__}."
        )
    return dist
