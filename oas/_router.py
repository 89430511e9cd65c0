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
    fitted_groups   {"digest": "sha256-16", "train": [...], "calibration": [...]}: the first 16
                    hex digits of sha256(group_id) of every group the ridge was trained on and
                    the thresholds calibrated on (``retcon evaluate`` / ``predict`` refuse data
                    whose groups are among them). Absent in files written before it existed:
                    the overlap then cannot be checked, and a warning says so.

mu_a(z) = intercept_a + sum_j coefficients[a][j] * (psi_j(z) - mean_j) / scale_j.

References: MODEL §8.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from oas._features import FEATURE_NAMES
from oas._policy import Thresholds, argmax_policy, calibrated_policy
from oas._theory_router import theory_router_from_json
from retcon.errors import InputError, check_choice, parse_json, read_text
from retcon.output import write_json_atomic
from retcon.vocab import ACTIONS, VOCABULARIES
from theory import PACKINGS, check_packing

_log = logging.getLogger(__name__)

FORMAT = "retcon-oas-router"
FORMAT_VERSION = 1
VARIANTS = ("argmax", "calibrated", "crc")
GROUP_DIGEST = "sha256-16"  # how ``fitted_groups`` spells a group: sha256(group_id)[:16]
_DIGEST = re.compile(r"[0-9a-f]{16}")


def group_digests(groups) -> tuple[str, ...]:
    """Sorted distinct digests (``GROUP_DIGEST``) of the group labels ``groups`` (any shape)."""
    labels = {str(g) for g in np.asarray(groups, dtype=object).ravel()}
    return tuple(sorted(hashlib.sha256(g.encode()).hexdigest()[:16] for g in labels))


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
    # {"train": digests, "calibration": digests} (``group_digests``); None: not recorded
    fitted_groups: dict | None = None

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
        if not 0 <= self.alpha < 1:
            raise InputError(f"Router.alpha must be in [0, 1); got {self.alpha}.")
        check_choice("Router.vocabulary", self.vocabulary, VOCABULARIES)
        check_packing("Router.packing", self.packing)
        if self.fitted_groups is not None:
            if set(self.fitted_groups) != {"train", "calibration"}:
                raise InputError(
                    "Router.fitted_groups must have the keys 'train' and 'calibration'; got "
                    f"{sorted(self.fitted_groups)}."
                )
            groups = {k: tuple(sorted(map(str, v))) for k, v in self.fitted_groups.items()}
            bad = [d for v in groups.values() for d in v if not _DIGEST.fullmatch(d)]
            if bad:
                raise InputError(
                    f"Router.fitted_groups must hold {GROUP_DIGEST} digests (16 hex digits); "
                    f"got {bad[0]!r}."
                )
            object.__setattr__(self, "fitted_groups", groups)

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
        check_choice("Router.choose: variant", variant, VARIANTS)
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
            **(
                {"fitted_groups": {"digest": GROUP_DIGEST, **{k: list(v) for k, v in g.items()}}}
                if (g := self.fitted_groups) is not None
                else {}
            ),
            **({"theory": self.theory.to_json()} if self.theory is not None else {}),
        }


def save_router(path: str | os.PathLike[str], router: Router) -> Path:
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
    for name, expected in (("feature_names", list(FEATURE_NAMES)), ("actions", list(ACTIONS))):
        if obj.get(name) != expected:
            raise InputError(f"{source}: field {name!r} must be {expected}; got {obj.get(name)!r}.")

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
        # the paper's zero-harm rule (alpha = 0) takes its candidates from every observed margin,
        # negative ones included (MODEL §8); every other rule searches tau >= 0
        paper_rule = _is_number(obj.get("alpha")) and obj.get("alpha") == 0
        for t in tau_raw:
            if t is not None and not (
                _is_number(t) and math.isfinite(t) and (t >= 0 or paper_rule)
            ):
                raise InputError(
                    f"{source}: field '{where}.tau' must hold numbers >= 0 (any finite number "
                    f"when alpha is 0) or null (retain); got {t!r}."
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
    if not (_is_number(alpha) and 0 <= alpha < 1):
        raise InputError(f"{source}: field 'alpha' must be a number in [0, 1); got {alpha!r}.")
    vocabulary = check_choice(f"{source}: field 'vocabulary'", get("vocabulary"), VOCABULARIES)
    if "query_types" in obj and obj["query_types"] != list(VOCABULARIES[vocabulary]):
        raise InputError(
            f"{source}: field 'query_types' must be {list(VOCABULARIES[vocabulary])} for "
            f"vocabulary {vocabulary!r}; got {obj['query_types']!r}."
        )
    packing = check_choice(f"{source}: field 'packing'", get("packing"), PACKINGS)
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
    fitted_groups = None
    if "fitted_groups" in obj:
        fg = obj["fitted_groups"]
        if not isinstance(fg, dict) or fg.get("digest") != GROUP_DIGEST:
            raise InputError(
                f"{source}: field 'fitted_groups' must be an object with digest "
                f"{GROUP_DIGEST!r}, train and calibration."
            )
        fitted_groups = {}
        for name in ("train", "calibration"):
            v = fg.get(name)
            if not isinstance(v, list) or not all(
                isinstance(d, str) and _DIGEST.fullmatch(d) for d in v
            ):
                raise InputError(
                    f"{source}: field 'fitted_groups.{name}' must be a list of 16-hex-digit "
                    "group digests."
                )
            fitted_groups[name] = v
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
        fitted_groups=fitted_groups,
    )


def load_router(path, *, option: str | None = None) -> Router:
    """Read a router JSON written by ``save_router`` / ``retcon fit``; every field is checked.

    Args:
      path: the file.
      option: the CLI option that named it (``--router``), for messages; None from Python.

    Raises:
      InputError: a missing file, bad JSON or text, or a field of the wrong type, shape or value.
    """

    path = Path(path)
    label = f"{option} {path}" if option else str(path)
    if not path.is_file():
        raise InputError(f"{label}: no such router file.")
    text = read_text(path, "router file")
    return router_from_json(parse_json(text, label, hint="; not a router file"), label)


def router_overlap(router: Router, groups) -> dict:
    """How many of the distinct ``groups`` the router was trained or calibrated on.

    Returns:
      ``{"checked": bool, "groups": n, "train": k_train, "calibration": k_calibration}``;
      ``checked`` is False (and the counts None) for a router that records no ``fitted_groups``.
    """
    digests = set(group_digests(groups))
    if router.fitted_groups is None:
        return {"checked": False, "groups": len(digests), "train": None, "calibration": None}
    return {
        "checked": True,
        "groups": len(digests),
        **{k: len(digests & set(v)) for k, v in router.fitted_groups.items()},
    }


def check_router_overlap(
    router: Router, groups, *, allow_overlap: bool = False, where: str = "groups of the data"
) -> dict:
    """Refuse to score ``groups`` the router was fitted or calibrated on (MODEL §8: held-out
    groups only); warn instead with ``allow_overlap``. A router without ``fitted_groups`` (a
    file from before they were recorded) cannot be checked: a warning says so.

    Args:
      router: the fitted router.
      groups: shape ``(n,)`` group labels of the rows about to be scored.
      allow_overlap: log a warning instead of raising.
      where: how messages name the groups (``"test groups"``).

    Returns:
      ``router_overlap(router, groups)``.

    Raises:
      InputError: an overlap, unless ``allow_overlap``.
    """
    ov = router_overlap(router, groups)
    if not ov["checked"]:
        _log.warning(
            "warning: the router file records no fitted_groups (written by an older retcon); "
            f"whether the {where} were used to fit it cannot be checked."
        )
        return ov
    seen = ov["train"] + ov["calibration"]
    if seen:
        msg = (
            f"{seen} of the {ov['groups']} {where} were used to fit the router "
            f"({ov['train']} for training, {ov['calibration']} for calibration): its predictions "
            "and scores on them are in-sample and optimistic. Use a router fitted on other groups "
            "(evaluate without one fits its own on the train groups), or allow the overlap "
            "(--allow-overlap; allow_overlap=True)."
        )
        if not allow_overlap:
            raise InputError(msg)
        _log.warning(f"warning: {msg}")
    return ov
