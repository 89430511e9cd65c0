"""The theory router: choose the action the identified §2 reader predicts best (MODEL §2, §8).

For a query ``q`` at budget ``B`` the router knows only what exists before any generation: the
raw context (record lengths in retriever order, which records are evidence), the packing mode, the
query type and the budget. Each operator's context is predicted from it with the data's expected
compression ratio ``rho_{o,t}`` (``oas.identify``'s token counts): ``merge`` and ``abstract``
replace the evidence records by one record of ``rho * (raw evidence tokens)`` at the first
evidence record's rank, ``rewrite`` scales every evidence record by ``rho``. The reader's fitted
``g``, ``a_t``, ``phi_{o,t}`` then give ``p_a(q, B)``; the policy takes the argmax (``ret`` on
ties). Parameters: ``g``, four ``a_t``, twelve ``phi_{o,t}`` (those the data identify), plus the
twelve compression ratios read off the data.

Stored in the router JSON as an optional ``theory`` block (``theory_version: 1``): numpy-only to
load; predicting packs the contexts with ``theory.pack`` (through ``oas.support_fractions``).

References: MODEL §2 (reader, packing), §8 (policy, ties to ret).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oas._policy import argmax_policy
from retcon.errors import InputError, check_integer
from retcon.vocab import ACTIONS, OPERATORS

THEORY_VERSION = 1
N_TYPES = 4


@dataclass(frozen=True)
class TheoryRouter:
    """Fitted reader (unconstrained ``theta``, ``oas.identify``'s parametrization) and ratios.

    Attributes:
      theta: ``(17,)`` ``[logit g, 4 x a-scale, 12 x log phi (operator-major)]``.
      compress_ratio: ``(3, 4)`` expected generated/raw evidence tokens per operator and type; a
        type never seen takes the operator's mean over seen types.
      n_params: parameters the data identified (for reports).
    """

    theta: np.ndarray
    compress_ratio: np.ndarray
    n_params: int = 17

    def __post_init__(self):
        th = np.asarray(self.theta, np.float64)
        cr = np.asarray(self.compress_ratio, np.float64)
        if th.shape != (1 + N_TYPES + len(OPERATORS) * N_TYPES,) or not np.isfinite(th).all():
            raise InputError(f"TheoryRouter.theta must be 17 finite numbers; got shape {th.shape}.")
        if cr.shape != (len(OPERATORS), N_TYPES) or not np.all((cr > 0) & np.isfinite(cr)):
            raise InputError(
                f"TheoryRouter.compress_ratio must be (3, 4) positive numbers; got {cr.tolist()}."
            )
        object.__setattr__(self, "theta", th)
        object.__setattr__(self, "compress_ratio", cr)

    def predicted_structure(self, structure, slot):
        """Each operator's context predicted from the raw (``ret``) context and ``rho_{o,t}``."""
        from oas._identify import Structure

        ln = np.asarray(structure.lengths, np.float64)[:, 0]  # (n, K) raw context
        ev = np.asarray(structure.evidence, bool)[:, 0]
        n, K = ln.shape
        rho = self.compress_ratio[:, np.asarray(slot)].T  # (n, 3)
        first = np.argmax(ev, axis=1)
        ev_tokens = np.where(ev, ln, 0.0).sum(axis=1)
        lengths = np.zeros((n, len(ACTIONS), K))
        evidence = np.zeros((n, len(ACTIONS), K), bool)
        lengths[:, 0], evidence[:, 0] = ln, ev
        rows = np.arange(n)
        for j in (1, 2):  # cross-note: one record at the first evidence record's rank
            lj = np.where(ev, 0.0, ln)
            lj[rows, first] = rho[:, j - 1] * ev_tokens
            ej = np.zeros_like(ev)
            ej[rows, first] = True
            lengths[:, j], evidence[:, j] = lj, ej
        lengths[:, 3] = np.where(ev, ln * rho[:, 2:3], ln)
        evidence[:, 3] = ev
        # drop the emptied slots so packing sees the records in order without zero-length gaps
        order = np.argsort(lengths <= 0, axis=-1, kind="stable")
        lengths = np.take_along_axis(lengths, order, -1)
        evidence = np.take_along_axis(evidence, order, -1)
        return Structure(lengths, evidence, np.asarray(structure.packing))

    def success(self, structure, budget, slot) -> np.ndarray:
        """``(n, 4)`` predicted ``p_a(q, B)`` from pre-generation structure."""
        from oas._out_of_fold import predict_success

        st = self.predicted_structure(structure, slot)
        return predict_success(self.theta, st, budget, slot)

    def choose(self, structure, budget, slot) -> np.ndarray:
        """``(n,)`` action index: argmax of the predicted ``p_a``, ``ret`` on ties."""
        return argmax_policy(self.success(structure, budget, slot))

    def to_json(self) -> dict:
        return {
            "theory_version": THEORY_VERSION,
            "theta": self.theta.tolist(),
            "compress_ratio": self.compress_ratio.tolist(),
            "n_params": int(self.n_params),
        }


def theory_router_from_json(obj, source: str = "router") -> TheoryRouter:
    """The ``theory`` block of a router JSON; ``InputError`` naming the bad field."""
    if not isinstance(obj, dict):
        raise InputError(f"{source}: field 'theory' must be an object; got {type(obj).__name__}.")
    if obj.get("theory_version") != THEORY_VERSION:
        raise InputError(
            f"{source}: field 'theory.theory_version' must be {THEORY_VERSION}; "
            f"got {obj.get('theory_version')!r}."
        )
    n_theta = 1 + N_TYPES + len(OPERATORS) * N_TYPES
    theta = _numbers(obj, "theta", (n_theta,), source)
    if np.any(np.abs(theta) > THETA_LIMIT):
        raise InputError(
            f"{source}: field 'theory.theta' must hold numbers in [-{THETA_LIMIT:g}, "
            f"{THETA_LIMIT:g}] (logit g, a-scales, log phi); got {theta.tolist()}."
        )
    cr = _numbers(obj, "compress_ratio", (len(OPERATORS), N_TYPES), source)
    if np.any((cr <= 0) | (cr > 1)):
        raise InputError(
            f"{source}: field 'theory.compress_ratio' must hold ratios in (0, 1] (generated / "
            f"raw evidence tokens, MODEL §1); got {cr.tolist()}."
        )
    n_params = obj.get("n_params", n_theta)
    check_integer(f"{source}: field 'theory.n_params'", n_params, 0, n_theta)
    return TheoryRouter(theta, cr, n_params)


# |theta| beyond this is no fit's output: sigmoid saturates, exp overflows soon after.
THETA_LIMIT = 100.0


def _numbers(obj: dict, name: str, shape: tuple, source: str) -> np.ndarray:
    """``obj[name]`` as a finite float array of ``shape``, or ``InputError`` naming the field."""
    if name not in obj:
        raise InputError(f"{source}: field 'theory.{name}' is missing.")
    value = obj[name]
    try:
        cells = np.asarray(value, dtype=object).ravel()
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in cells)
        a = np.asarray(value, dtype=np.float64) if numeric else None
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != shape or isinstance(value, (str, bool)):
        raise InputError(
            f"{source}: field 'theory.{name}' must be a list of numbers of shape {shape}; "
            f"got {value!r:.80}."
        )
    if not np.all(np.isfinite(a)):
        raise InputError(f"{source}: field 'theory.{name}' must hold finite numbers.")
    return a


def fit_theory_router(key, data, *, n_resamples: int = 0) -> TheoryRouter:
    """Identify the reader on ``data`` (``evidence_structure`` needed) and build the router."""
    from oas._identify import identify, reader_rows
    from oas._structure import paired_structure

    rows = reader_rows(
        paired_structure(data),
        data.budget,
        data.query_type_slot,
        data.outcomes,
        data.group_id.astype(str),
    )
    fit = identify(key, rows, n_resamples=n_resamples)
    cr = np.array(fit.compress_ratio, np.float64)
    for j in range(len(OPERATORS)):
        seen = np.isfinite(cr[j])
        cr[j, ~seen] = cr[j, seen].mean() if seen.any() else 1.0
    cr = np.clip(cr, 1e-6, 1.0)  # MODEL §1: rho in (0, 1); a longer "compression" keeps length
    return TheoryRouter(np.asarray(fit.theta, np.float64), cr, fit.n_params)


__all__ = ["THEORY_VERSION", "TheoryRouter", "fit_theory_router", "theory_router_from_json"]
