"""The paper's outcome-blind LoCoMo sample: 75 questions, stratified proportionally over four
gold-evidence-cost strata, drawn with seed 20260716 before any generation (MODEL §11).

``paper_sample(key, query_id, evidence_cost)`` sees only question ids and their gold-evidence
cost, never an outcome, so it is outcome-blind by construction. Where it follows the paper: the
sample size, the four strata, the proportional allocation, and the seed (the caller's default).
Where it is our reading: the strata are the quartiles of one cost per question
(``oas.length_strata``, the package's one strata rule); the allocation is proportional with the
largest remainders rounded up (ties to the lower stratum); inside a stratum the questions are
sorted by id and drawn by a keyed permutation, stratum ``s`` using ``fold_in(key, s)``. Our
generator differs from the paper's, so the questions drawn differ from theirs.

References: MODEL §11 (LoCoMo sample).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from oas import length_strata
from retcon.errors import InputError

PAPER_SEED = 20260716
PAPER_N = 75
PAPER_STRATA = 4


class PaperSample(NamedTuple):
    """The drawn question ids (sorted), and per stratum its size and its share of the draw."""

    query_id: np.ndarray  # (n_sample,) str, sorted
    stratum_size: np.ndarray  # (k,) questions in each stratum
    allocation: np.ndarray  # (k,) questions drawn from each stratum


def proportional_allocation(sizes, n: int) -> np.ndarray:
    """Split ``n`` over strata of ``sizes`` in proportion, largest remainders rounded up (ties to
    the lower stratum), never more than a stratum holds."""
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum())
    if not 0 < n <= total:
        raise InputError(f"paper_sample: n must be in [1, {total}] (the questions); got {n}.")
    exact = sizes * n / total
    alloc = np.floor(exact).astype(np.int64)
    order = sorted(range(len(sizes)), key=lambda s: (-(exact[s] - alloc[s]), s))
    for s in order[: n - int(alloc.sum())]:
        alloc[s] += 1
    return np.minimum(alloc, sizes)


def paper_sample(
    key: jax.Array, query_id, evidence_cost, *, n: int = PAPER_N, n_strata: int = PAPER_STRATA
) -> PaperSample:
    """Draw the stratified outcome-blind sample of questions.

    Args:
      key: JAX key (the paper: seed 20260716, ``jax.random.key(PAPER_SEED)``).
      query_id: shape ``(q,)`` distinct question ids.
      evidence_cost: shape ``(q,)`` gold-evidence cost of each question, in tokens.
      n: questions to draw.
      n_strata: cost strata (quartiles by default).

    Returns:
      ``PaperSample``.

    References: MODEL §11.
    """
    qid = np.asarray(query_id).astype(str)
    if len(np.unique(qid)) != len(qid):
        raise InputError("paper_sample: query_id must list each question once.")
    strata = length_strata(evidence_cost, qid, n_strata)
    k = len(strata.lower)
    sizes = np.bincount(strata.stratum, minlength=k)
    alloc = proportional_allocation(sizes, n)
    drawn = []
    for s in range(k):
        members = np.sort(qid[strata.stratum == s])
        perm = np.asarray(jax.random.permutation(jax.random.fold_in(key, s), len(members)))
        drawn.extend(members[perm[: alloc[s]]].tolist())
    return PaperSample(np.sort(np.array(drawn, dtype=str)), sizes, alloc)
