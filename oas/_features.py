"""The 11 OAS features psi(z) of an instance z = (q, C, B), computable before any generation.

One implementation for simulated and real data: ``sim`` instances and paired-data files with raw
fields both go through ``compute_features_batch``. Plain numpy (no JAX), so a deployed router can
compute its inputs without JAX.

Features, in ``FEATURE_NAMES`` order (MODEL §8):
  1. ``budget_over_512``          B / 512
  2. ``token_pressure``           len(C) / B, with len(C) the sum of raw record token lengths
  3. ``budget_fit_fraction``      f_B: share of C's records (evidence turns) that cheapest-first
                                  retention packs whole (the paper's, the default); under
                                  ``definitions="ours"`` the share of C's raw tokens that
                                  retention packs under B (prefix / skip / cut packing, MODEL §2)
  4. ``constituent_count``        |C|
  5. ``session_count``            number of distinct session ids in C
  6. ``embedding_inconsistency``  mean squared distance of the unit-normalized record embeddings
                                  to their mean, ``mean_m ||e_m - ebar||^2`` (the paper's, the
                                  default); under ``definitions="ours"`` the mean over C of
                                  1 - cos(e_m, centroid), the centroid the mean of the unit vectors
  7. ``mean_pairwise_cosine``     mean of cos(e_i, e_j) over pairs i < j; 1.0 for one record
  8-11. ``query_type_0..3``       one-hot of the query type's slot in its vocabulary
                                  (``retcon.vocab``)

``definitions`` picks features 3 and 6: ``"paper"`` (MODEL §8, the spec: the paper's definitions)
or ``"ours"`` (the package's before issue 31; kept so that older runs can be reproduced).
``DEFAULT_DEFINITIONS`` is the one place that sets which a caller gets without saying; it is
``"paper"``, so every feature computed (simulated and real, oracle and end to end) is the paper's
unless a caller asks for ``"ours"``. Feature 3 under ``"paper"`` ignores ``packing``: the paper's
``f_B`` is cheapest-first whatever the context packing.

References: MODEL §2 (packing), §8 (features).
"""

from __future__ import annotations

import numpy as np

from retcon.errors import InputError, check_choice
from theory import check_packing, pack_reference

FEATURE_NAMES = (
    "budget_over_512",
    "token_pressure",
    "budget_fit_fraction",
    "constituent_count",
    "session_count",
    "embedding_inconsistency",
    "mean_pairwise_cosine",
    "query_type_0",
    "query_type_1",
    "query_type_2",
    "query_type_3",
)
N_FEATURES = len(FEATURE_NAMES)
N_QUERY_TYPES = 4
#: Features 3 and 6: the package's definitions or the paper's (MODEL §8).
FEATURE_DEFINITIONS = ("ours", "paper")
#: What ``compute_features`` uses when the caller does not say: the paper's (MODEL §8).
DEFAULT_DEFINITIONS = "paper"


def check_definitions(definitions: str | None) -> str:
    """``definitions`` resolved (``None``: ``DEFAULT_DEFINITIONS``) and checked."""
    d = DEFAULT_DEFINITIONS if definitions is None else definitions
    return check_choice("features: definitions", d, FEATURE_DEFINITIONS)


def cheapest_fit_share(budget, lengths, mask=None) -> np.ndarray:
    """The paper's f_B: share of the cluster's records packed whole by cheapest-first retention.

    Cheapest-first (MODEL §2): whole records in increasing length, ties in the given (retriever)
    order, each that still fits taken (``skip`` on the length-sorted list).

    Args:
      budget: shape ``(n,)``, tokens, > 0.
      lengths: shape ``(n, K)``, record token lengths.
      mask: shape ``(n, K)`` bool, which slots hold a record; ``None`` means all.

    Returns:
      shape ``(n,)`` in [0, 1]: records packed whole over records.

    References: MODEL §2 (cheapest packing), §8 (feature 3, the paper's Table 9).
    """
    budget = np.asarray(budget, dtype=np.float64).reshape(-1)
    lengths = np.asarray(lengths, dtype=np.float64)
    mask = np.ones(lengths.shape, bool) if mask is None else np.asarray(mask, bool)
    order = np.argsort(np.where(mask, lengths, np.inf), axis=1, kind="stable")
    ln = np.take_along_axis(np.where(mask, lengths, 0.0), order, axis=1)
    m = np.take_along_axis(mask, order, axis=1)
    kept = pack_reference(ln, budget, "skip")
    whole = m & (kept >= ln) & (kept > 0)
    return whole.sum(axis=1) / np.maximum(m.sum(axis=1), 1)


def _unit_records(embeddings, mask) -> tuple[np.ndarray, np.ndarray]:
    """``(u, mask)``: each record's embedding over its norm, zero where the norm is 0 or the slot
    is masked out (``mask`` ``None``: all slots), for features 6 and 7."""
    e = np.asarray(embeddings, dtype=np.float64)
    n, k = e.shape[:2]
    mask = np.ones((n, k), bool) if mask is None else np.asarray(mask, bool)
    norm = np.linalg.norm(e, axis=-1, keepdims=True)
    return np.where((norm > 0) & mask[..., None], e / np.where(norm > 0, norm, 1.0), 0.0), mask


def embedding_spread(embeddings, mask=None) -> np.ndarray:
    """The paper's feature 6: mean squared distance of unit-normalised embeddings to their mean.

    ``mean_m ||u_m - ubar||^2`` with ``u_m = e_m / ||e_m||`` (a zero vector stays zero), which for
    unit vectors equals ``1 - ||ubar||^2``.

    Args:
      embeddings: shape ``(n, K, D)``.
      mask: shape ``(n, K)`` bool; ``None`` means all.

    Returns:
      shape ``(n,)``, >= 0 (0 for a single record).

    References: MODEL §8 (feature 6).
    """
    u, mask = _unit_records(embeddings, mask)
    count = np.maximum(mask.sum(axis=1), 1).astype(np.float64)
    mean = u.sum(axis=1) / count[:, None]
    d2 = ((u - mean[:, None, :]) ** 2).sum(axis=-1)
    return np.where(mask, d2, 0.0).sum(axis=1) / count


def budget_fit_fraction(budget, lengths, mask=None, packing: str = "prefix") -> np.ndarray:
    """Share f_B of the cluster's raw tokens that retention packs under ``budget``.

    Records are taken in the given (retriever) order and packed by ``theory.pack_reference``, the
    one packing rule (MODEL §2); under ``cut`` this is ``min(B, len(C)) / len(C)``.

    Args:
      budget: shape ``(n,)``, tokens, > 0.
      lengths: shape ``(n, K)``, record token lengths (> 0 where ``mask``).
      mask: shape ``(n, K)`` bool, which slots hold a record; ``None`` means all.
      packing: ``"prefix"``, ``"skip"`` or ``"cut"``.

    Returns:
      shape ``(n,)`` in [0, 1].

    References: MODEL §2 (packing), §8 (feature 3).
    """
    check_packing("packing", packing)
    budget = np.asarray(budget, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.float64)
    mask = np.ones(lengths.shape, bool) if mask is None else np.asarray(mask, bool)
    lengths = np.where(mask, lengths, 0.0)
    packed = pack_reference(lengths, budget, packing).sum(axis=1)
    return packed / np.maximum(lengths.sum(axis=1), 1e-300)


def embedding_statistics(embeddings, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Cluster inconsistency and mean pairwise cosine of record embeddings (features 6 and 7).

    Args:
      embeddings: shape ``(n, K, D)``; a zero vector has cosine 0 with everything.
      mask: shape ``(n, K)`` bool, which slots hold a record; ``None`` means all.

    Returns:
      ``(inconsistency, pairwise)``, each of shape ``(n,)``: the mean over records of
      1 - cos(e_m, centroid) (centroid = mean of unit vectors), and the mean cosine over record
      pairs (1.0 when the cluster has one record).

    References: MODEL §8 (features 6, 7).
    """
    u, mask = _unit_records(embeddings, mask)
    count = mask.sum(axis=1).astype(np.float64)
    centroid = u.sum(axis=1) / np.maximum(count, 1.0)[:, None]
    c_norm = np.linalg.norm(centroid, axis=-1, keepdims=True)
    c_unit = np.where(c_norm > 0, centroid / np.where(c_norm > 0, c_norm, 1.0), 0.0)
    cos_c = np.einsum("nkd,nd->nk", u, c_unit)
    inconsistency = np.where(mask, np.maximum(1.0 - cos_c, 0.0), 0.0).sum(axis=1) / np.maximum(
        count, 1.0
    )
    # sum_{i<j} cos(u_i, u_j) = (|sum u|^2 - sum |u|^2) / 2
    s = u.sum(axis=1)
    pair_sum = 0.5 * (np.einsum("nd,nd->n", s, s) - np.einsum("nkd,nkd->n", u, u))
    n_pairs = 0.5 * count * (count - 1.0)
    pairwise = np.where(count > 1, pair_sum / np.maximum(n_pairs, 1.0), 1.0)
    return inconsistency, pairwise


def compute_features_batch(
    budget,
    lengths,
    mask,
    session_ids,
    embeddings,
    query_type_slot,
    packing: str = "prefix",
    definitions: str | None = None,
) -> np.ndarray:
    """The 11 features of MODEL §8 for a batch of instances with padded clusters.

    Args:
      budget: shape ``(n,)``, tokens, > 0.
      lengths: shape ``(n, K)``, raw record token lengths in retriever order.
      mask: shape ``(n, K)`` bool, which slots hold a record (at least one per row).
      session_ids: shape ``(n, K)``, integer session ids (any integers; compared within a row).
      embeddings: shape ``(n, K, D)``, record embeddings.
      query_type_slot: shape ``(n,)`` int in 0..3, the query type's index in its vocabulary.
      packing: ``"prefix"`` (default), ``"skip"`` or ``"cut"`` for feature 3 under
        ``definitions="ours"`` (the paper's feature 3 is cheapest-first).
      definitions: features 3 and 6, ``"paper"`` or ``"ours"`` (module docstring); ``None``:
        ``DEFAULT_DEFINITIONS`` (``"paper"``).

    Returns:
      shape ``(n, 11)`` float64, columns in ``FEATURE_NAMES`` order.

    References: MODEL §2, §8.
    """
    paper = check_definitions(definitions) == "paper"
    budget = np.asarray(budget, dtype=np.float64).reshape(-1)
    lengths = np.asarray(lengths, dtype=np.float64)
    mask = np.asarray(mask, bool)
    sessions = np.asarray(session_ids)
    slot = np.asarray(query_type_slot).reshape(-1).astype(np.int64)
    n = budget.shape[0]
    if lengths.shape[0] != n or mask.shape != lengths.shape or sessions.shape != lengths.shape:
        raise InputError(
            f"compute_features_batch: lengths, mask and session_ids must share shape (n, K) "
            f"with n={n}; got {lengths.shape}, {mask.shape}, {sessions.shape}."
        )
    if np.any((slot < 0) | (slot >= N_QUERY_TYPES)):
        raise InputError(
            f"compute_features_batch: query_type_slot must be in 0..3; got {slot[(slot < 0) | (slot >= 4)][0]}."
        )
    count = mask.sum(axis=1)
    # distinct sessions per row: sort the row's ids (masked slots pushed to the end) and count changes
    big = np.iinfo(np.int64).max
    s = np.sort(np.where(mask, sessions.astype(np.int64), big), axis=1)
    starts = np.concatenate([np.ones((n, 1), bool), s[:, 1:] != s[:, :-1]], axis=1) & (s != big)
    inconsistency, pairwise = embedding_statistics(embeddings, mask)
    out = np.zeros((n, N_FEATURES))
    _budget_columns(out, budget, lengths, mask, paper, packing)
    out[:, 3] = count
    out[:, 4] = starts.sum(axis=1)
    out[:, 5] = embedding_spread(embeddings, mask) if paper else inconsistency
    out[:, 6] = pairwise
    out[np.arange(n), 7 + slot] = 1.0
    return out


def compute_features(
    budget,
    cluster_lengths,
    session_ids,
    embeddings,
    query_type_slot: int,
    packing: str = "prefix",
    definitions: str | None = None,
) -> np.ndarray:
    """The 11 features of MODEL §8 for one cluster, at one budget or at each of several.

    Only features 1-3 depend on the budget; the others (record and session counts, the embedding
    statistics, the type) are computed once, at the first budget. Features 1-3 are elementwise per
    budget and reduce each row on its own, so row ``i`` of several budgets is the one budget
    ``budget[i]`` alone gives, bit for bit.

    Args:
      budget: tokens, > 0: a number, or shape ``(m,)`` (at least one).
      cluster_lengths: shape ``(k,)``, raw record token lengths of C in retriever order, > 0.
      session_ids: shape ``(k,)``, the records' session ids (any hashable labels).
      embeddings: shape ``(k, D)``, record embeddings.
      query_type_slot: the query type's index (0..3) in its vocabulary.
      packing: ``"prefix"`` (default), ``"skip"`` or ``"cut"`` for feature 3 under
        ``definitions="ours"``.
      definitions: features 3 and 6, ``"paper"`` or ``"ours"``; ``None``: ``DEFAULT_DEFINITIONS``
        (``"paper"``).

    Returns:
      shape ``(11,)`` float64 in ``FEATURE_NAMES`` order for a number; ``(m, 11)`` for ``(m,)``.

    References: MODEL §2, §8.
    """
    budgets = np.asarray(budget, dtype=np.float64)
    if budgets.size == 0:
        raise InputError("compute_features: budget is empty; expected at least one.")
    lengths = np.asarray(cluster_lengths, dtype=np.float64).reshape(1, -1)
    k = lengths.shape[1]
    emb = np.asarray(embeddings, dtype=np.float64)
    if k == 0:
        raise InputError("compute_features: the cluster is empty; expected at least one record.")
    if len(session_ids) != k or emb.ndim != 2 or emb.shape[0] != k:
        raise InputError(
            f"compute_features: cluster_lengths has {k} records but session_ids has "
            f"{len(session_ids)} and embeddings has shape {emb.shape}; expected {k} each."
        )
    _, sid = np.unique(np.asarray([str(s) for s in session_ids]), return_inverse=True)
    b = budgets.reshape(-1)
    first = compute_features_batch(
        b[:1],
        lengths,
        np.ones((1, k), bool),
        sid.reshape(1, k),
        emb[None],
        np.asarray([query_type_slot]),
        packing,
        definitions,
    )
    if budgets.ndim == 0:
        return first[0]
    out = np.tile(first, (b.size, 1))
    paper = check_definitions(definitions) == "paper"
    _budget_columns(
        out, b, np.tile(lengths, (b.size, 1)), np.ones(out.shape[:1] + (k,), bool), paper, packing
    )
    return out


def _budget_columns(out: np.ndarray, budget, lengths, mask, paper: bool, packing: str) -> None:
    """Write features 1-3 (MODEL §8: budget / 512, raw tokens / budget, the fit share) of rows
    ``(budget (n,), lengths (n, K), mask (n, K))`` into ``out[:, :3]``: the only budget-dependent
    ones, shared by ``compute_features_batch`` and ``compute_features``."""
    out[:, 0] = budget / 512.0
    out[:, 1] = np.where(mask, lengths, 0.0).sum(axis=1) / budget
    if paper:
        out[:, 2] = cheapest_fit_share(budget, lengths, mask)
    else:
        out[:, 2] = budget_fit_fraction(budget, lengths, mask, packing)
