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

from oas._features import FEATURE_NAMES
from oas._policy import Thresholds, argmax_policy, calibrated_policy
from oas._theory_router import theory_router_from_json
from retcon.errors import InputError
from retcon.output import write_json_atomic
from retcon.vocab import ACTIONS, VOCABULARIES
from theory import PACKINGS, check_packing

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
    theory: Any = None  # optional oas._theory_router.TheoryRouter (JSON block "theory")

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
        check_packing("Router.packing", self.packing)

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
            **({"theory": self.theory.to_json()} if self.theory is not None else {}),
        }


def save_router(path, router: Router) -> Path:
    """Write ``router`` as JSON atomically (no pickle)."""
    return write_json_atomic(path, router.to_json())


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def router_from_json(obj: dict, source: str = "router") -> Router:
    """Build a ``Router`` from its JSON object, every field checked; ``InputError`` names the field.

    A router file is untrusted input: types, shapes, finite values, ranges and vocabulary are all
    checked here, so a loaded router always predicts as ``retcon fit`` meant it to.
    """
    if not isinstance(obj, dict):
        raise InputError(f"{source}: expected a JSON object; got {type(obj).__name__}.")
    if obj.get("format") != FORMAT:
        raise InputError(f"{source}: field 'format' must be {FORMAT!r}; got {obj.get('format')!r}.")
    version = obj.get("format_version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise InputError(
            f"{source}: field 'format_version' must be {FORMAT_VERSION} (this retcon reads "
            f"version {FORMAT_VERSION}); got {version!r}."
        )
    if obj.get("feature_names") != list(FEATURE_NAMES):
        raise InputError(
            f"{source}: field 'feature_names' must be {list(FEATURE_NAMES)}; got {obj.get('feature_names')!r}."
        )
    if obj.get("actions") != list(ACTIONS):
        raise InputError(
            f"{source}: field 'actions' must be {list(ACTIONS)}; got {obj.get('actions')!r}."
        )

    def get(*keys) -> Any:
        cur: Any = obj
        for k in keys:
            if not isinstance(cur, dict) or k not in cur:
                raise InputError(f"{source}: missing field {'.'.join(keys)!r}.")
            cur = cur[k]
        return cur

    def arr(shape, *keys, positive: bool = False):
        name = ".".join(keys)
        value = get(*keys)
        a = None
        if isinstance(value, list):
            try:
                a = np.array(value, dtype=object)
            except ValueError:  # ragged
                a = None
        if a is None or a.shape != shape or not all(_is_number(v) for v in a.ravel()):
            got = np.shape(value) if isinstance(value, list) else type(value).__name__
            raise InputError(
                f"{source}: field {name!r} must be a list of numbers of shape {shape}; got "
                f"{got if a is None or a.shape != shape else 'a non-number in it'}."
            )
        a = a.astype(np.float64)
        if not np.all(np.isfinite(a)):
            raise InputError(f"{source}: field {name!r} must hold finite numbers; got {value!r}.")
        if positive and np.any(a <= 0):
            raise InputError(f"{source}: field {name!r} must hold numbers > 0; got {value!r}.")
        return a

    def th(name):
        where = f"thresholds.{name}"
        raw_b = get("thresholds", name, "budgets")
        if not isinstance(raw_b, list):
            raise InputError(
                f"{source}: field '{where}.budgets' must be a list of budgets (tokens)."
            )
        m = len(raw_b)
        budgets = arr((m,), "thresholds", name, "budgets", positive=True)
        if len(np.unique(budgets)) != m:
            raise InputError(f"{source}: field '{where}.budgets' must not repeat a budget.")
        if np.any(np.diff(budgets) <= 0):  # retcon fit writes them increasing, tau beside each
            raise InputError(
                f"{source}: field '{where}.budgets' must be increasing, each beside its tau, as "
                f"retcon fit writes them; got {raw_b!r} (an edited file?)."
            )
        tau_raw = get("thresholds", name, "tau")
        if not isinstance(tau_raw, list) or len(tau_raw) != m:
            raise InputError(
                f"{source}: field '{where}.tau' must be a list as long as its budgets ({m}); got "
                f"{len(tau_raw) if isinstance(tau_raw, list) else type(tau_raw).__name__}."
            )
        for t in tau_raw:
            if t is not None and not (_is_number(t) and math.isfinite(t) and t >= 0):
                raise InputError(
                    f"{source}: field '{where}.tau' must hold numbers >= 0 or null (retain); got {t!r}."
                )
        tau = np.array([np.inf if t is None else float(t) for t in tau_raw])
        n_raw = obj["thresholds"][name].get("n", [0] * m)
        if (
            not isinstance(n_raw, list)
            or len(n_raw) != m
            or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in n_raw)
        ):
            raise InputError(
                f"{source}: field '{where}.n' must be a list of {m} integers >= 0; got {n_raw!r}."
            )
        n = np.asarray(n_raw, dtype=np.int64).reshape(m)
        order = np.argsort(budgets)
        return Thresholds(budgets[order], tau[order], n[order])

    p, k = len(FEATURE_NAMES), len(ACTIONS)
    alpha = get("alpha")
    if not (_is_number(alpha) and 0 < alpha < 1):
        raise InputError(f"{source}: field 'alpha' must be a number in (0, 1); got {alpha!r}.")
    vocabulary = get("vocabulary")
    if not isinstance(vocabulary, str) or vocabulary not in VOCABULARIES:
        raise InputError(
            f"{source}: field 'vocabulary' must be one of {list(VOCABULARIES)}; got {vocabulary!r}."
        )
    if "query_types" in obj and obj["query_types"] != list(VOCABULARIES[vocabulary]):
        raise InputError(
            f"{source}: field 'query_types' must be {list(VOCABULARIES[vocabulary])} for "
            f"vocabulary {vocabulary!r}; got {obj['query_types']!r}."
        )
    packing = get("packing")
    if not isinstance(packing, str) or packing not in PACKINGS:
        raise InputError(
            f"{source}: field 'packing' must be one of {list(PACKINGS)}; got {packing!r}."
        )
    provenance = obj.get("provenance", {})
    if not isinstance(provenance, dict):
        raise InputError(
            f"{source}: field 'provenance' must be an object; got {type(provenance).__name__}."
        )
    thresholds = get("thresholds")
    if not isinstance(thresholds, dict):
        raise InputError(f"{source}: field 'thresholds' must be an object with calibrated and crc.")
    for name in ("calibrated", "crc"):
        if not isinstance(thresholds.get(name), dict):
            raise InputError(f"{source}: field 'thresholds.{name}' must be an object.")
    return Router(
        mean=arr((p,), "standardization", "mean"),
        scale=arr((p,), "standardization", "scale", positive=True),
        coef=arr((k, p), "coefficients"),
        intercept=arr((k,), "intercepts"),
        penalty=arr((k,), "penalties", positive=True),
        calibrated=th("calibrated"),
        crc=th("crc"),
        alpha=float(alpha),
        vocabulary=vocabulary,
        packing=packing,
        provenance=provenance,
        theory=None if "theory" not in obj else theory_router_from_json(obj["theory"], source),
    )


def load_router(path, *, option: str | None = None) -> Router:
    """Read a router JSON written by ``save_router`` / ``retcon fit``; every field is checked.

    Args:
      path: the file.
      option: the CLI option that named it (``--router``), for messages; None from Python.

    Raises:
      InputError: a missing file, bad JSON or text, or a field of the wrong type, shape or value.
    """
    from retcon.errors import read_text

    path = Path(path)
    label = f"{option} {path}" if option else str(path)
    if not path.is_file():
        raise InputError(f"{label}: no such router file.")
    text = read_text(path, "router file")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{label}: not valid JSON ({e.msg} at line {e.lineno}).") from None
    except RecursionError:
        raise InputError(f"{label}: JSON nested too deeply; not a router file.") from None
    return router_from_json(obj, label)
