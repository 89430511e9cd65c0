"""LoCoMo-sized synthetic worlds for the identified reader (MODEL §2), with known truth.

Each world draws queries of four types with 1-3 evidence records and distractors in random
retriever order; ``merge`` and ``abstract`` replace the evidence by one record of ``rho`` times
its tokens at the first evidence rank, ``rewrite`` scales each evidence record by ``rho``. Every
query is asked at every budget (paired rows); outcomes share one uniform per row across actions.
The reader is MODEL §2's, with a fidelity that may drift with the budget (the misspecified
world): ``phi(B)`` from ``phi_start`` at ``B = 8`` to ``phi_end`` at ``B = 1024`` in ``log B``.
Plain numpy on an explicit ``numpy.random.Generator``: no compilation, so a slow-tier test can
afford a hundred worlds.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import oas
import theory

RECORDS = np.array([1, 3, 2, 2])  # evidence records per type slot
TYPE_WEIGHTS = np.array([0.4, 0.25, 0.2, 0.15])
LOCOMO_BUDGETS = np.asarray(theory.octave_grid(32, 2048, 2), float)  # 13 budgets


class Reader(NamedTuple):
    acc_guess: float
    acc_raw: np.ndarray  # (4,)
    fidelity: np.ndarray  # (3, 4)
    compress_ratio: np.ndarray  # (3,)


class World(NamedTuple):
    structure: oas.Structure
    budget: np.ndarray
    slot: np.ndarray
    outcomes: np.ndarray
    groups: np.ndarray
    query: np.ndarray
    truth: np.ndarray  # (n, 4) true success probabilities


def random_reader(rng: np.random.Generator) -> Reader:
    """A hidden-style reader: every parameter drawn, rewrite's fidelity near 1."""
    g = rng.uniform(0.02, 0.2)
    a = rng.uniform(0.55, 0.95, 4)
    phi = np.stack(
        [rng.uniform(0.7, 1.0, 4), rng.uniform(0.55, 0.95, 4), rng.uniform(0.9, 1.02, 4)]
    )
    rho = np.array([rng.uniform(0.25, 0.6), rng.uniform(0.1, 0.35), rng.uniform(0.5, 0.85)])
    return Reader(g, a, phi, rho)


def make_world(
    rng: np.random.Generator,
    reader: Reader,
    *,
    n_queries: int = 1500,
    n_groups: int = 10,
    budgets=LOCOMO_BUDGETS,
    packing: str = "prefix",
    record_median: float = 250.0,
    distractors: int = 3,
    drift: tuple[float, float] | None = None,
) -> World:
    """One world of ``n_queries`` x ``len(budgets)`` paired rows (module docstring).

    ``drift=(phi_start, phi_end)`` replaces every operator's fidelity by the budget-dependent one
    (the misspecified world); ``None`` keeps ``reader.fidelity`` (well specified).
    """
    budgets = np.asarray(budgets, float)
    slot = rng.choice(4, n_queries, p=TYPE_WEIGHTS)
    k_ev = RECORDS[slot]
    K = RECORDS.max() + distractors
    raw = rng.lognormal(np.log(record_median), 0.6, (n_queries, K))
    is_ev = np.arange(K)[None] < k_ev[:, None]
    raw = np.where(is_ev | (np.arange(K)[None] >= RECORDS.max()), raw, 0.0)
    # retriever order: a random permutation of the present records
    order = np.argsort(np.where(raw > 0, rng.uniform(size=raw.shape), 2.0), axis=1)
    raw = np.take_along_axis(raw, order, 1)
    is_ev = np.take_along_axis(is_ev, order, 1)
    lengths = np.zeros((n_queries, 4, K))
    evidence = np.zeros((n_queries, 4, K), bool)
    lengths[:, 0], evidence[:, 0] = raw, is_ev
    total = np.where(is_ev, raw, 0.0).sum(1)
    first = np.argmax(is_ev, axis=1)
    for j in range(2):  # merge, abstract: one record at the first evidence rank
        ln = np.where(is_ev, 0.0, raw)
        ln[np.arange(n_queries), first] = reader.compress_ratio[j] * total
        ev = np.zeros_like(is_ev)
        ev[np.arange(n_queries), first] = True
        # keep the records in order, dropping the emptied evidence slots
        keep = ln > 0
        idx = np.argsort(~keep, axis=1, kind="stable")
        lengths[:, 1 + j] = np.take_along_axis(ln, idx, 1)
        evidence[:, 1 + j] = np.take_along_axis(ev, idx, 1)
    lengths[:, 3] = np.where(is_ev, reader.compress_ratio[2] * raw, raw)
    evidence[:, 3] = is_ev
    m = budgets.size
    q = np.repeat(np.arange(n_queries), m)
    budget = np.tile(budgets, n_queries)
    structure = oas.Structure(lengths[q], evidence[q], np.full(q.size, packing))
    frac = oas.support_fractions(structure, budget)
    s = slot[q]
    a, g = reader.acc_raw[s], reader.acc_guess
    if drift is None:
        phi = reader.fidelity[:, s].T  # (n, 3)
    else:
        t = np.clip((np.log(budget) - np.log(8.0)) / (np.log(1024.0) - np.log(8.0)), 0, 1)
        phi = np.repeat((drift[0] + (drift[1] - drift[0]) * t)[:, None], 3, axis=1)
    p = np.empty((q.size, 4))
    p[:, 0] = g + (a - g) * frac[:, 0]
    p[:, 1:] = g + (a - g)[:, None] * phi * frac[:, 1:]
    p = np.clip(p, 0.0, 1.0)
    u = rng.uniform(size=(q.size, 1))
    groups = np.asarray([f"g{v}" for v in (q % n_groups)], dtype=object)
    return World(structure, budget, s, (u < p).astype(float), groups, q, p)


def strata_of(world: World, n_strata: int = 3) -> np.ndarray:
    """``(n,)`` stratum of each row: quantile bins of raw evidence tokens over queries."""
    raw = np.where(world.structure.evidence[:, 0], world.structure.lengths[:, 0], 0.0).sum(-1)
    _, first = np.unique(world.query, return_index=True)
    edges = np.quantile(raw[first], np.linspace(0, 1, n_strata + 1))
    return np.clip(np.searchsorted(edges[1:-1], raw, side="right"), 0, n_strata - 1)


def misfit_args(world: World, seed: int = 0) -> tuple:
    """The positional arguments of ``oas._misfit.misfit_tests`` and
    ``oas._identify_misfit.misfit_attribution`` for ``world``: a key, the rows
    (``oas.ReaderRows``), ``theta`` from ``oas.identify`` fitted with key ``seed`` (no
    resamples), and the rows' strata."""
    import jax

    w = world
    rows = oas.reader_rows(w.structure, w.budget, w.slot, w.outcomes, w.groups)
    fit = oas.identify(jax.random.key(seed), rows, n_resamples=0)
    return jax.random.key(seed + 1), rows, fit.theta, strata_of(w)
