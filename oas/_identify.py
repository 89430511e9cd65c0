"""Identify the reader of docs/model.md §2 from paired data: ``g``, ``a_t`` and ``phi_{o,t}``.

The reader gives every action ``a`` of a row (query ``q`` of type ``t``, budget ``B``) the success
probability

    p_ret = g + (a_t - g) s_ret,      p_o = g + (a_t - g) phi_{o,t} s_o      (clipped to [0, 1])

where ``s_a`` is the part of the support that the packing decides: the product, over the evidence
units of the action's context, of the share of each unit's tokens that the packing keeps (1 when
whole, 0 when absent, ``kept / len`` for a unit that ``cut`` truncates). The fidelity ``phi_{o,t}``
(§6's parametrization note: the *support* of a generated record, the §2 parametrization) is what
the data identify beyond ``s``. ``s`` needs no parameter: it is computed from each row's stored
structure (the record lengths of every action's context in packing order, which of them carry the
evidence, the packing mode) with the one packing rule ``theory.pack``.

The fit is maximum likelihood over every row and action (Bernoulli log-likelihood; a graded
outcome in [0, 1] enters as its quasi-likelihood), one jitted Fisher-scoring fit over cells
(rows pooled by equal action, type and packing support: the sufficient statistics). Parameters live on an
unconstrained scale: ``g = sigmoid(u_g)``, ``a_t = g + (1 - g) sigmoid(u_t)`` (so ``g < a_t``),
``phi_{o,t} = exp(v_{o,t})`` (``phi > 1`` allowed). A weak Gaussian prior (``PRIOR_PRECISION``) on
the unconstrained scale keeps parameters that the data cannot move finite; parameters with no
informative row are reported as NaN. The grouped bootstrap refits on resampled groups
(conversations), all resamples at once (``vmap`` over group multiplicities).

References: docs/model.md §2 (reader, packing), §6 (parametrization note), §8 (grouped CIs).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from retcon.errors import InputError, check_range
from retcon.vocab import ACTIONS, OPERATORS
from theory import reader_success

N_TYPES = 4
N_OPS = len(OPERATORS)
N_PARAMS = 1 + N_TYPES + N_OPS * N_TYPES
PRIOR_PRECISION = 1e-6  # per row-normalized log-likelihood: negligible once a parameter has data
P_EPS = 1e-6  # success probabilities are clipped to [P_EPS, 1 - P_EPS] inside the log-likelihood


def row_bucket(n: int) -> int:
    """The padded row count for ``n`` rows: the smallest of 64, 96, 128, 192, 256, 384, ... (powers
    of two and 1.5 times them) that holds ``n``: at most a third of the rows are padding, and
    calls on the folds and resamples of one data set share a few compiled shapes."""
    size = 64
    while size < n:
        size = size * 3 // 2 if size & (size - 1) == 0 else size * 4 // 3
    return size


def _pad_rows(x: np.ndarray, size: int, fill=0) -> np.ndarray:
    """``x`` with rows appended (``fill``) up to ``size`` rows."""
    out = np.full((size, *x.shape[1:]), fill, dtype=x.dtype)
    out[: x.shape[0]] = x
    return out


class Structure(NamedTuple):
    """The evidence structure of n rows (or queries): every action's context before packing.

    Attributes:
      lengths: ``(n, 4, K)`` record lengths in packing (retriever) order per action, ACTIONS
        order; 0 on padding.
      evidence: ``(n, 4, K)`` bool, the records that carry the query's evidence (raw evidence for
        ``ret``, the generated record(s) for an operator); distractors are False.
      packing: ``(n,)`` str, the packing mode of each row (``prefix``, ``skip`` or ``cut``).
    """

    lengths: np.ndarray
    evidence: np.ndarray
    packing: np.ndarray

    def take(self, index) -> Structure:
        return Structure(self.lengths[index], self.evidence[index], self.packing[index])


class ReaderParams(NamedTuple):
    """The reader of docs/model.md §2 (fidelity in the §2 parametrization).

    Attributes:
      acc_guess: ``()`` ``g``.
      acc_raw: ``(4,)`` ``a_t`` per query-type slot.
      fidelity: ``(3, 4)`` ``phi_{o,t}`` per operator (OPERATORS order) and type slot.
    """

    acc_guess: np.ndarray
    acc_raw: np.ndarray
    fidelity: np.ndarray


class Identified(NamedTuple):
    """The fitted reader with grouped-bootstrap intervals.

    Attributes:
      params: maximum-likelihood ``ReaderParams`` (NaN where not identified).
      lower, upper: ``ReaderParams`` percentile bounds.
      theta: ``(P,)`` the unconstrained MLE; ``theta_boot``: ``(R, P)`` the bootstrap refits.
      identified: ``ReaderParams`` of bools: which parameters have informative rows.
      compress_ratio: ``(3, 4)`` mean generated/raw evidence tokens per operator and type (data).
      n_rows: ``(4,)`` rows per type slot; log_likelihood: at the MLE (sum over rows and actions).
      level: CI level; n_resamples: R.
    """

    params: ReaderParams
    lower: ReaderParams
    upper: ReaderParams
    theta: np.ndarray
    theta_boot: np.ndarray
    identified: ReaderParams
    compress_ratio: np.ndarray
    n_rows: np.ndarray
    log_likelihood: float
    level: float
    n_resamples: int

    @property
    def n_params(self) -> int:
        """Free parameters that the data identify."""
        i = self.identified
        return int(i.acc_guess.sum() + i.acc_raw.sum() + i.fidelity.sum())


def support_fractions(structure: Structure, budgets) -> np.ndarray:
    """The packing part ``s_a`` of the support, per row (or query) and action.

    Args:
      structure: ``Structure`` of n rows.
      budgets: ``(n,)`` budgets (one per row), or ``(n, m)``: m budgets per row.

    Returns:
      ``(n, 4)`` (or ``(n, m, 4)``): product over each action's evidence records of the share of
      the record's tokens the packing keeps (``theory.pack``, the one packing rule).

    References: docs/model.md §2 (packing, support).
    """
    from theory import PACKINGS, pack

    lengths = np.asarray(structure.lengths, np.float32)
    evidence = np.asarray(structure.evidence, bool)
    packing = np.asarray(structure.packing)
    b = np.asarray(budgets, np.float32)
    grid = b.ndim == 2
    if b.shape[0] != lengths.shape[0]:
        raise InputError(
            f"support_fractions: budgets has {b.shape[0]} rows; structure has {lengths.shape[0]}."
        )
    n, A, _ = lengths.shape
    m = b.shape[1] if grid else 1
    out = np.ones((n, m, A))
    bb = b.reshape(n, m)
    for mode in np.unique(packing):
        if mode not in PACKINGS:
            raise InputError(f"packing must be one of {list(PACKINGS)}; got {mode!r}.")
        rows = np.flatnonzero(packing == mode)
        ln = lengths[rows][:, None, :, :]  # (r, 1, A, K)
        ln = np.broadcast_to(ln, (rows.size, m, A, ln.shape[-1]))
        bud = np.broadcast_to(bb[rows][:, :, None], (rows.size, m, A))
        # rows padded to a bucket (empty contexts), so the folds share pack's compilations
        size = row_bucket(rows.size)
        kept = np.asarray(pack(_pad_rows(ln, size), _pad_rows(bud, size, 1), str(mode)))
        kept = kept[: rows.size].astype(np.float64)
        lf = ln.astype(np.float64)
        frac = np.where(kept >= lf, 1.0, kept / np.where(lf > 0, lf, 1.0))
        frac = np.where(evidence[rows][:, None], frac, 1.0)
        # an action whose context holds no evidence record (an empty generation) supports nothing
        none = ~np.asarray(evidence[rows].any(axis=-1))[:, None, :]
        out[rows] = np.where(none, 0.0, np.prod(frac, axis=-1))
    return out if grid else out[:, 0]


class ReaderRows(NamedTuple):
    """The rows the reader of docs/model.md §2 is identified from, with their packing support
    computed once (``reader_rows`` builds it; ``take`` slices it, support included).

    Attributes:
      structure: ``Structure`` of the n rows.
      budget: ``(n,)`` float64 budgets.
      slot: ``(n,)`` int64 query-type slots in ``0..3``.
      outcomes: ``(n, 4)`` float64 outcomes in [0, 1], ACTIONS order.
      groups: ``(n,)`` group labels (conversations): the bootstrap's and the folds' unit.
      support: ``(n, 4)`` ``support_fractions(structure, budget)``.
    """

    structure: Structure
    budget: np.ndarray
    slot: np.ndarray
    outcomes: np.ndarray
    groups: np.ndarray
    support: np.ndarray

    @property
    def n(self) -> int:
        return int(self.budget.shape[0])

    def take(self, index) -> ReaderRows:
        """The rows ``index`` (an int array or a bool mask), in that order."""
        return ReaderRows(
            self.structure.take(index),
            self.budget[index],
            self.slot[index],
            self.outcomes[index],
            self.groups[index],
            self.support[index],
        )


def reader_rows(structure: Structure, budget, slot, outcomes, groups) -> ReaderRows:
    """Check the rows and compute their packing support once (``support_fractions``).

    Args:
      structure: ``Structure`` of the n rows.
      budget: ``(n,)`` budgets; slot: ``(n,)`` query-type slots in ``0..3``.
      outcomes: ``(n, 4)`` in [0, 1], ACTIONS order; groups: ``(n,)`` labels.

    Raises:
      InputError: shapes that disagree, slots outside ``0..3``, no rows.

    References: docs/model.md §2 (packing, support), §8.
    """
    y = np.asarray(outcomes, np.float64)
    if y.ndim != 2 or y.shape[1] != len(ACTIONS):
        raise InputError(f"identify: outcomes must have shape (n, 4); got {y.shape}.")
    n = y.shape[0]
    if n == 0:
        raise InputError("identify: no rows; expected at least one paired-data row.")
    sl = np.asarray(slot, np.int64)
    if sl.shape != (n,) or np.any((sl < 0) | (sl >= N_TYPES)):
        raise InputError(f"identify: slot must be (n,) ints in 0..3; got shape {sl.shape}.")
    b = np.asarray(budget, np.float64)
    g = np.asarray(groups)
    if b.shape != (n,) or g.shape != (n,):
        raise InputError(
            f"identify: budget {b.shape} and groups {g.shape} must have the outcomes' {n} rows."
        )
    return ReaderRows(structure, b, sl, y, g, support_fractions(structure, b))


def unpack_theta(theta):
    """``(..., P)`` unconstrained parameters -> ``(g (...), a (..., 4), phi (..., 3, 4))``."""
    g = jax.nn.sigmoid(theta[..., 0])
    a = g[..., None] + (1.0 - g[..., None]) * jax.nn.sigmoid(theta[..., 1 : 1 + N_TYPES])
    phi = jnp.exp(theta[..., 1 + N_TYPES :]).reshape(*theta.shape[:-1], N_OPS, N_TYPES)
    return g, a, phi


def success_prob(theta, frac, slot):
    """Success probabilities of the §2 reader from the packing supports ``frac``.

    Args:
      theta: ``(P,)`` unconstrained parameters.
      frac: ``(..., 4)`` packing supports ``s_a`` (``support_fractions``), ACTIONS order.
      slot: ``(...)`` int query-type slots.

    Returns:
      ``(..., 4)`` probabilities, ACTIONS order.
    """
    g, a, phi = unpack_theta(theta)
    a_t = a[slot]
    phi_t = jnp.moveaxis(phi[:, slot], 0, -1)  # (..., 3)
    s = jnp.concatenate([frac[..., :1], phi_t * frac[..., 1:]], axis=-1)
    return reader_success(s, a_t[..., None], g)


_success_prob_jit = jax.jit(success_prob)
_success_prob_many = jax.jit(jax.vmap(success_prob, in_axes=(0, None, None)))


def success_prob_rows(theta, frac, slot, *, fused: bool = True) -> np.ndarray:
    """``success_prob`` of n rows in float32 for ``(P,)`` or ``(R, P)`` parameters, as numpy
    ``(n, 4)`` or ``(R, n, 4)``: rows padded to ``row_bucket(n)``, so the programs compiled for
    one fold serve every fold and data set of its bucket. ``fused=False`` runs the operations one
    by one (eagerly) rather than as one jitted program, which XLA may round differently in the
    last bit: ``identify``'s log-likelihood keeps the eager bits, ``predict_success`` the jitted."""
    frac = np.asarray(frac, np.float32)
    n = frac.shape[0]
    size = row_bucket(n)
    args = (
        jnp.asarray(_pad_rows(frac, size)),
        jnp.asarray(_pad_rows(np.asarray(slot, np.int32), size)),
    )
    th = jnp.asarray(theta, jnp.float32)
    if th.ndim == 1:
        return np.asarray((_success_prob_jit if fused else success_prob)(th, *args))[:n]
    return np.asarray(_success_prob_many(th, *args))[:, :n]


class Cells(NamedTuple):
    """Sufficient statistics: the likelihood of a row's action depends on the row only through
    (action, type slot, packing support), so rows are pooled into cells of equal triples.

    Attributes:
      action, slot: ``(C,)`` int; frac: ``(C,)`` the packing support of the cell.
      index: ``(n, 4)`` the cell of each row and action.
    """

    action: np.ndarray
    slot: np.ndarray
    frac: np.ndarray
    index: np.ndarray


def make_cells(frac, slot) -> Cells:
    """Pool rows x actions into cells of equal (action, slot, support rounded to 1e-9)."""
    frac = np.asarray(frac, np.float64)
    n, A = frac.shape
    act = np.broadcast_to(np.arange(A)[None], (n, A))
    sl = np.broadcast_to(np.asarray(slot)[:, None], (n, A))
    key = np.stack([act.ravel(), sl.ravel(), np.round(frac.ravel() * 1e9)], axis=1)
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    return Cells(
        uniq[:, 0].astype(np.int64),
        uniq[:, 1].astype(np.int64),
        uniq[:, 2] / 1e9,
        inv.reshape(n, A),
    )


def cell_sums(cells: Cells, y, row_weights) -> tuple[np.ndarray, np.ndarray]:
    """Weighted counts ``N`` and outcome sums ``S`` per cell, ``(R, C)`` each, for ``(R, n)``
    row weights (a sparse row-to-cell map: ``cut`` packing makes about one cell per row)."""
    from scipy import sparse

    y = np.asarray(y, np.float64)
    w = np.atleast_2d(np.asarray(row_weights, np.float64))
    C = cells.action.shape[0]
    n, A = cells.index.shape
    rows = np.repeat(np.arange(n), A)
    cols = cells.index.ravel()
    to_n = sparse.csr_matrix((np.ones(n * A), (rows, cols)), shape=(n, C))
    to_s = sparse.csr_matrix((y.ravel(), (rows, cols)), shape=(n, C))
    return np.asarray((to_n.T @ w.T).T), np.asarray((to_s.T @ w.T).T)


def _cell_prob(theta, action, slot, frac):
    g, a, phi = unpack_theta(theta)
    a_t = a[slot]
    phi_c = jnp.concatenate([jnp.ones((1, N_TYPES)), phi])[action, slot]
    return reader_success(phi_c * frac, a_t, g)


def _cells_nll(theta, action, slot, frac, n_w, s_w):
    p = jnp.clip(_cell_prob(theta, action, slot, frac), P_EPS, 1.0 - P_EPS)
    ll = s_w * jnp.log(p) + (n_w - s_w) * jnp.log1p(-p)
    total = jnp.maximum(n_w.sum(), 1.0)
    return -ll.sum() / total + 0.5 * PRIOR_PRECISION * jnp.sum(theta**2)


@partial(jax.jit, static_argnames=("n_steps",))
def _fit_many(theta0, action, slot, frac, n_w, s_w, *, n_steps: int = 40):
    """Damped Fisher-scoring fits, one per row of the cell weights ``(R, C)``.

    The step solves ``(I + lam diag(I)) d = grad`` with ``I = J' diag(N / (p (1 - p))) J`` the
    expected information of the cells (``J = dp / dtheta``) plus the prior; it is taken only when
    it lowers the objective, ``lam`` shrinking after an accepted step and growing after a rejected
    one, so every fit descends monotonically (Levenberg-Marquardt on the Fisher metric).
    """
    n_par = theta0.shape[0]
    eye = jnp.eye(n_par, dtype=theta0.dtype)

    def prob(th):
        return jnp.clip(_cell_prob(th, action, slot, frac), P_EPS, 1.0 - P_EPS)

    def one(nw, sw):
        f = partial(_cells_nll, action=action, slot=slot, frac=frac, n_w=nw, s_w=sw)
        total = jnp.maximum(nw.sum(), 1.0)

        def step(state, _):
            th, lam, fv = state
            p = prob(th)
            jac = jax.jacfwd(prob)(th)  # (C, P)
            info = (jac * (nw / (p * (1.0 - p)))[:, None]).T @ jac / total + PRIOR_PRECISION * eye
            gr = jax.grad(f)(th)
            d = jnp.linalg.solve(info + lam * jnp.diag(jnp.diag(info)) + 1e-9 * eye, -gr)
            th_new = th + d
            f_new = f(th_new)
            ok = jnp.isfinite(f_new) & (f_new <= fv)
            return (
                jnp.where(ok, th_new, th),
                jnp.where(ok, lam / 3.0, lam * 4.0),
                jnp.where(ok, f_new, fv),
            ), None

        init = (theta0, jnp.asarray(1e-3, theta0.dtype), f(theta0))
        (th, _, _), _ = jax.lax.scan(step, init, None, n_steps)
        return th

    return jax.vmap(one)(n_w, s_w)


def initial_theta() -> np.ndarray:
    g, a, phi = 0.1, 0.7, 0.9
    u_a = np.log((a - g) / (1 - g) / (1 - (a - g) / (1 - g)))
    return np.concatenate(
        [[np.log(g / (1 - g))], np.full(N_TYPES, u_a), np.full(N_OPS * N_TYPES, np.log(phi))]
    ).astype(np.float64)


def group_weights(key: jax.Array, groups, n_resamples: int) -> np.ndarray:
    """``(R, n)`` row weights of ``n_resamples`` grouped-bootstrap resamples: every row gets its
    group's multiplicity (``retcon.bootstrap.group_resample_weights``, the one engine)."""
    from retcon.bootstrap import group_index, group_resample_weights

    ids, n_groups = group_index(groups)
    return group_resample_weights(key, n_groups, int(n_resamples))[:, ids]


def _params(theta) -> ReaderParams:
    g, a, phi = unpack_theta(jnp.asarray(theta))
    return ReaderParams(np.asarray(g, np.float64), np.asarray(a, np.float64), np.asarray(phi))


def compress_ratios(structure: Structure, slot) -> np.ndarray:
    """``(3, 4)`` mean over queries of (generated evidence tokens) / (raw evidence tokens).

    Args:
      structure: one entry per query (or row: a query repeated over budgets weighs the same for
        every query only when every query has the same number of budgets).
      slot: ``(n,)`` type slots.

    Returns:
      NaN for a type without rows (or whose rows are all retrieval misses, no raw evidence). The
      data's token counts, not a fitted quantity.
    """
    ev = np.where(structure.evidence, structure.lengths, 0.0).sum(axis=-1)  # (n, 4)
    ratio = ev[:, 1:] / np.where(ev[:, :1] > 0, ev[:, :1], np.nan)
    out = np.full((N_OPS, N_TYPES), np.nan)
    slot = np.asarray(slot)
    for t in range(N_TYPES):
        sel = (slot == t) & np.isfinite(ratio[:, 0])  # NaN: no raw evidence (a retrieval miss)
        if sel.any():
            out[:, t] = ratio[sel].mean(axis=0)
    return out


def identify(
    key: jax.Array,
    rows: ReaderRows,
    *,
    n_resamples: int = 200,
    level: float = 0.95,
    n_steps: int = 40,
) -> Identified:
    """Fit the §2 reader by maximum likelihood, with grouped-bootstrap CIs.

    Args:
      key: JAX key for the bootstrap resamples.
      rows: ``ReaderRows`` (``reader_rows``): structure, budgets, type slots, outcomes, groups
        and their packing support.
      n_resamples: bootstrap refits R (0: no CIs, bounds NaN).
      level: two-sided CI level.
      n_steps: Fisher-scoring steps per fit.

    Returns:
      ``Identified``.

    References: docs/model.md §2, §8.
    """
    check_range("identify: level", level, 0, 1)
    if isinstance(n_resamples, bool) or int(n_resamples) < 0:
        raise InputError(f"identify: n_resamples must be an integer >= 0; got {n_resamples!r}.")
    structure, slot, y, groups, frac = (
        rows.structure,
        rows.slot,
        rows.outcomes,
        rows.groups,
        rows.support,
    )
    n = rows.n
    cells = make_cells(frac, slot)
    theta0 = jnp.asarray(initial_theta(), jnp.float32)
    # pad the cells to a power of 2 (zero weight) so fits of similar data share a compilation
    pad = max(64, 1 << int(np.ceil(np.log2(max(cells.action.size, 1))))) - cells.action.size
    cargs = tuple(
        jnp.asarray(np.concatenate([x, np.zeros(pad, x.dtype)]))
        for x in (cells.action, cells.slot, cells.frac.astype(np.float32))
    )

    def fit(weights):
        n_w, s_w = (np.pad(v, ((0, 0), (0, pad))) for v in cell_sums(cells, y, weights))
        return np.asarray(
            _fit_many(
                theta0,
                *cargs,
                jnp.asarray(n_w, jnp.float32),
                jnp.asarray(s_w, jnp.float32),
                n_steps=n_steps,
            )
        )

    theta = fit(np.ones((1, n)))[0]
    if n_resamples:
        boot = fit(group_weights(key, groups, int(n_resamples)))
    else:
        boot = np.full((0, N_PARAMS), np.nan)
    # which parameters the rows inform
    n_rows = np.bincount(slot, minlength=N_TYPES)
    has_a = np.array([np.any((slot == t) & (frac[:, 0] > 0)) for t in range(N_TYPES)])
    has_phi = np.array(
        [[np.any((slot == t) & (frac[:, 1 + o] > 0)) for t in range(N_TYPES)] for o in range(N_OPS)]
    )
    has_g = np.array(np.any(frac == 0))
    ident = ReaderParams(has_g, has_a, has_phi)
    est = _params(theta)
    alpha = (1.0 - level) / 2.0
    if boot.shape[0]:
        bp = _params(boot)
        lo = ReaderParams(*(np.quantile(x, alpha, axis=0) for x in bp))
        hi = ReaderParams(*(np.quantile(x, 1.0 - alpha, axis=0) for x in bp))
    else:
        lo = hi = ReaderParams(*(np.full_like(x, np.nan) for x in est))

    def mask(p: ReaderParams) -> ReaderParams:
        return ReaderParams(*(np.where(i, x, np.nan) for x, i in zip(p, ident)))

    p_hat = np.clip(success_prob_rows(theta, frac, slot, fused=False), P_EPS, 1 - P_EPS)
    ll = float((y * np.log(p_hat) + (1 - y) * np.log1p(-p_hat)).sum())
    return Identified(
        params=mask(est),
        lower=mask(lo),
        upper=mask(hi),
        theta=theta,
        theta_boot=boot,
        identified=ident,
        compress_ratio=compress_ratios(structure, slot),
        n_rows=n_rows,
        log_likelihood=ll,
        level=float(level),
        n_resamples=int(n_resamples),
    )


__all__ = [
    "Identified",
    "ReaderParams",
    "ReaderRows",
    "Structure",
    "compress_ratios",
    "group_weights",
    "identify",
    "reader_rows",
    "success_prob",
    "support_fractions",
    "unpack_theta",
]
