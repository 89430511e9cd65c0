"""A fitted OAS router as plain data: JSON export, ``load_router``, prediction in numpy.

A deployed agent computes the 11 features (``oas.compute_features``), loads the router JSON and
calls ``Router.choose``; nothing on this path imports JAX, and nothing is pickled.

JSON layout (``format: "retcon-oas-router"``, ``format_version: 1``)::

    feature_names   the 11 names, in order (MODEL §8)
    actions         ["ret", "merge", "abstract", "rewrite"]
    vocabulary      query-type vocabulary of features 8-11 ("locomo" / "longmemeval")
    packing         packing used for feature 3
    standardization {"mean": [11], "scale": [11]}  (training split only)
    coefficients    [4][11] on standardized features;  intercepts [4];  penalties [4]
    thresholds      {"calibrated": {"budgets": [m], "tau": [m]}, "crc": {...}}; tau null = retain
    alpha           the harm bound the thresholds were fitted for
    provenance      command, seed, versions, data file, split sizes

mu_a(z) = intercept_a + sum_j coefficients[a][j] * (psi_j(z) - mean_j) / scale_j.

References: MODEL §8.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from oas._features import FEATURE_NAMES, PACKINGS
from oas._policy import Thresholds, argmax_policy, calibrated_policy
from retcon.errors import InputError
from retcon.output import write_json_atomic
from retcon.vocab import ACTIONS, VOCABULARIES

FORMAT = "retcon-oas-router"
FORMAT_VERSION = 1
VARIANTS = ("argmax", "calibrated", "crc")


@dataclass(frozen=True)
class Router:
    """A fitted OAS router (numpy arrays); build with ``oas.fit_router`` or ``load_router``.

    Attributes:
      mean, scale: shape ``(11,)`` standardization.
      coef: shape ``(4, 11)``; intercept, penalty: shape ``(4,)``.
      calibrated, crc: per-budget ``Thresholds`` of the two calibrations.
      alpha: the harm bound used for the thresholds.
      vocabulary, packing: how the features were made.
      provenance: free-form JSON-able dict.
    """

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    penalty: np.ndarray
    calibrated: Thresholds
    crc: Thresholds
    alpha: float
    vocabulary: str = "locomo"
    packing: str = "prefix"
    provenance: dict = field(default_factory=dict)

    def __post_init__(self):
        p = len(FEATURE_NAMES)
        shapes = {
            "mean": (p,),
            "scale": (p,),
            "coef": (len(ACTIONS), p),
            "intercept": (len(ACTIONS),),
            "penalty": (len(ACTIONS),),
        }
        for name, shape in shapes.items():
            value = np.asarray(getattr(self, name), dtype=np.float64)
            if value.shape != shape:
                raise InputError(f"Router.{name} must have shape {shape}; got {value.shape}.")
            if not np.all(np.isfinite(value)):
                raise InputError(f"Router.{name} must be finite.")
            object.__setattr__(self, name, value)
        if np.any(self.scale <= 0):
            raise InputError(f"Router.scale must be > 0; got {self.scale.tolist()}.")
        if not 0 < self.alpha < 1:
            raise InputError(f"Router.alpha must be in (0, 1); got {self.alpha}.")
        if self.vocabulary not in VOCABULARIES:
            raise InputError(
                f"Router.vocabulary must be one of {list(VOCABULARIES)}; got {self.vocabulary!r}."
            )
        if self.packing not in PACKINGS:
            raise InputError(
                f"Router.packing must be one of {list(PACKINGS)}; got {self.packing!r}."
            )

    def utility(self, features) -> np.ndarray:
        """mu_a(z): shape ``(n, 4)`` from features ``(n, 11)`` (or ``(11,)`` -> ``(4,)``)."""
        x = np.asarray(features, dtype=np.float64)
        single = x.ndim == 1
        x = x.reshape(-1, len(FEATURE_NAMES)) if x.size else x.reshape(0, len(FEATURE_NAMES))
        mu = self.intercept + ((x - self.mean) / self.scale) @ self.coef.T
        return mu[0] if single else mu

    def choose(self, features, budget, variant: str = "calibrated") -> np.ndarray:
        """Action index per row (``ACTIONS`` order): ``argmax``, ``calibrated`` (a) or ``crc`` (b).

        Args:
          features: shape ``(n, 11)``.
          budget: shape ``(n,)`` tokens (selects tau_B; an uncalibrated budget retains).
          variant: ``"argmax"``, ``"calibrated"`` or ``"crc"``.

        Returns:
          shape ``(n,)`` int.

        References: MODEL §8 (policy, calibrated variant).
        """
        if variant not in VARIANTS:
            raise InputError(
                f"Router.choose: variant must be one of {list(VARIANTS)}; got {variant!r}."
            )
        mu = self.utility(np.asarray(features, dtype=np.float64).reshape(-1, len(FEATURE_NAMES)))
        if variant == "argmax":
            return argmax_policy(mu)
        th = self.calibrated if variant == "calibrated" else self.crc
        return calibrated_policy(mu, np.asarray(budget, dtype=np.float64).reshape(-1), th)

    def to_json(self) -> dict:
        def th(t: Thresholds) -> dict:
            return {
                "budgets": [float(b) for b in t.budgets],
                "tau": [None if not math.isfinite(x) else float(x) for x in t.tau],
                "n": [int(c) for c in t.n],
            }

        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "feature_names": list(FEATURE_NAMES),
            "actions": list(ACTIONS),
            "vocabulary": self.vocabulary,
            "query_types": list(VOCABULARIES[self.vocabulary]),
            "packing": self.packing,
            "standardization": {"mean": self.mean.tolist(), "scale": self.scale.tolist()},
            "coefficients": self.coef.tolist(),
            "intercepts": self.intercept.tolist(),
            "penalties": self.penalty.tolist(),
            "thresholds": {"calibrated": th(self.calibrated), "crc": th(self.crc)},
            "alpha": float(self.alpha),
            "provenance": self.provenance,
        }


def save_router(path, router: Router) -> Path:
    """Write ``router`` as JSON atomically (no pickle)."""
    return write_json_atomic(path, router.to_json())


def router_from_json(obj: dict, source: str = "router") -> Router:
    """Build a ``Router`` from its JSON object; raise ``InputError`` naming the bad field."""
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise InputError(
            f"{source}: field 'format' must be {FORMAT!r}; got "
            f"{obj.get('format') if isinstance(obj, dict) else type(obj).__name__!r}."
        )
    if obj.get("format_version") != FORMAT_VERSION:
        raise InputError(
            f"{source}: field 'format_version' must be {FORMAT_VERSION}; got {obj.get('format_version')!r}."
        )
    if obj.get("feature_names") != list(FEATURE_NAMES):
        raise InputError(
            f"{source}: field 'feature_names' must be {list(FEATURE_NAMES)}; got {obj.get('feature_names')!r}."
        )
    if obj.get("actions") != list(ACTIONS):
        raise InputError(
            f"{source}: field 'actions' must be {list(ACTIONS)}; got {obj.get('actions')!r}."
        )

    def get(*keys: str) -> Any:
        cur = obj
        for k in keys:
            if not isinstance(cur, dict) or k not in cur:
                raise InputError(f"{source}: missing field {'.'.join(keys)!r}.")
            cur = cur[k]
        return cur

    def arr(*keys):
        try:
            return np.asarray(get(*keys), dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"{source}: field {'.'.join(keys)!r} must be numbers.") from None

    def th(name):
        budgets = arr("thresholds", name, "budgets")
        tau_raw = get("thresholds", name, "tau")
        if not isinstance(tau_raw, list) or len(tau_raw) != len(budgets):
            raise InputError(
                f"{source}: field 'thresholds.{name}.tau' must be a list as long as its budgets."
            )
        tau = np.array([np.inf if t is None else float(t) for t in tau_raw])
        n = np.asarray(obj["thresholds"][name].get("n", [0] * len(budgets)), dtype=np.int64)
        order = np.argsort(budgets)
        return Thresholds(budgets[order], tau[order], n[order])

    return Router(
        mean=arr("standardization", "mean"),
        scale=arr("standardization", "scale"),
        coef=arr("coefficients"),
        intercept=arr("intercepts"),
        penalty=arr("penalties"),
        calibrated=th("calibrated"),
        crc=th("crc"),
        alpha=float(get("alpha")),
        vocabulary=get("vocabulary"),
        packing=get("packing"),
        provenance=obj.get("provenance", {}),
    )


def load_router(path) -> Router:
    """Read a router JSON written by ``save_router`` / ``retcon fit``.

    Raises:
      InputError: a missing file, bad JSON, or a field of the wrong name, shape or value.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such router file.")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON ({e.msg} at line {e.lineno}).") from None
    return router_from_json(obj, str(path))
