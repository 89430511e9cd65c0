"""The paper's controlled design on real data (``--design paper``; MODEL §2, §8, §11).

What ``--design paper`` fixes, step by step as MODEL §11 records the paper's protocol:

* **Sample.** An outcome-blind sample of 75 questions, stratified proportionally over four
  gold-evidence-cost strata, drawn before any generation with seed 20260716
  (``paper_sample_queries``; the draw itself is ``oas.real._paper_sample.paper_sample``). The
  cost is the alphanumeric-token count of the question's gold evidence turns. Our generator
  differs from the paper's, so the questions differ from theirs.
* **Budgets.** LoCoMo 16, 32, 64, 128; LongMemEval 32, 64, 128, 256 (``PAPER_BUDGETS``).
* **Token cost.** The alphanumeric-token count, maximal runs of ``[A-Za-z0-9]`` (``AlnumTokenizer``).
* **Packing.** Cheapest-first: whole records in increasing length, ties in retriever order, each
  that still fits taken (``cheapest_first`` then ``skip`` packing).
* **Records.** Retention packs whole raw evidence turns; every generated record is
  deterministically capped at the budget (``cap_records``: its first ``B`` tokens) before packing.
* **Features.** Features 3 and 6 as the paper defines them (``oas._features``, definitions
  ``"paper"``).

Where this is our reading: the cap keeps a record's first ``B`` alphanumeric tokens and the text
between them (punctuation and spaces inside the kept span); the rendered record (with its
``[date]`` prefix) is what is counted and capped, as for retention.

References: MODEL §2 (packing, token count), §8 (features 3, 6), §11 (protocol).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from oas.real._full_history import FULL_HISTORY_TOP_K
from oas.real._text import AlnumTokenizer
from oas.real._types import Conversation, Query

DESIGNS = ("ours", "paper")
#: The paper's LongMemEval split before modelling: train 350 / dev 75 / test 75 (MODEL §11).
PAPER_SPLIT = (("train", 350), ("dev", 75), ("test", 75))
#: The paper's budgets per data set (MODEL §11).
PAPER_BUDGETS = {"locomo": (16, 32, 64, 128), "longmemeval": (32, 64, 128, 256)}
#: What ``--design paper`` sets on a pair run (the rest of the options keep their meaning).
PAPER_SETTINGS = {"granularity": "turn", "packing": "skip", "tokenizer": "alnum"}


def design_overlay(design: str, dataset: str, protocol: str = "oracle") -> dict:
    """What ``design`` puts over a pair run's settings, by ``PairConfig`` field (and
    ``tokenizer``): the one statement of "apply the paper's design", read by ``retcon pair`` and
    ``retcon paper-checks`` alike.

    Args:
      design: ``"ours"`` (sets nothing) or ``"paper"``.
      dataset: ``"locomo"`` or ``"longmemeval"`` (the paper's budgets differ).
      protocol: ``"oracle"`` or ``"end-to-end"`` (the paper's full-history run: BM25, top
        ``FULL_HISTORY_TOP_K`` turns).

    Returns:
      ``{}`` for ours; for the paper ``PAPER_SETTINGS``, ``budgets`` (``PAPER_BUDGETS[dataset]``)
      and, end to end, ``retriever`` and ``top_k``, in that order (MODEL §11).
    """
    if design != "paper":
        return {}
    out = {**PAPER_SETTINGS, "budgets": PAPER_BUDGETS[dataset]}
    if protocol == "end-to-end":
        out |= {"retriever": "bm25", "top_k": FULL_HISTORY_TOP_K}
    return out


def cheapest_first(
    texts: Sequence[str], lengths: Sequence[int], records: Sequence
) -> tuple[list[str], list[int], list]:
    """``(texts, lengths, records)`` reordered cheapest-first: increasing length, ties in the given
    (retriever) order (MODEL §2, ``cheapest``); ``skip`` packing of this order is the paper's."""
    order = [int(i) for i in np.argsort(np.asarray(lengths, dtype=np.int64), kind="stable")]
    return (
        [texts[i] for i in order],
        [int(lengths[i]) for i in order],
        [records[i] for i in order],
    )


def cap_records(texts: Sequence[str], budget: int, tokenizer) -> tuple[list[str], list[int]]:
    """Each generated record capped at ``budget`` tokens (its first ``budget`` tokens), with the
    capped lengths; the paper's deterministic cap (MODEL §11, controlled protocol)."""
    capped = [t if tokenizer.count(t) <= budget else tokenizer.truncate(t, budget) for t in texts]
    return capped, [tokenizer.count(t) for t in capped]


def evidence_cost(query: Query, conversation: Conversation, tokenizer) -> int:
    """The question's gold-evidence cost: alphanumeric tokens of its rendered evidence turns."""
    from oas.real._instances import cluster_of, render

    return int(sum(tokenizer.count(render(r)) for r in cluster_of(query, conversation, "turn")))


def paper_sample_queries(
    conversations: Sequence[Conversation], *, seed: int | None = None, n: int | None = None
) -> list[tuple[Conversation, Query]]:
    """The paper's stratified outcome-blind sample as ``(conversation, query)`` pairs, file order.

    Args:
      conversations: loaded conversations (their 4-way-typed questions with evidence).
      seed: the draw's seed; ``None``: the paper's, 20260716.
      n: questions to draw; ``None``: the paper's 75 (all when fewer exist).

    Returns:
      the drawn pairs in file order (conversation, then question).

    References: MODEL §11 (LoCoMo sample).
    """
    import jax

    from oas.real._paper_sample import PAPER_N, PAPER_SEED, paper_sample

    tok = AlnumTokenizer()
    pairs = [(c, q) for c in conversations for q in c.queries]
    if not pairs:
        return []
    ids = [q.query_id for _, q in pairs]
    cost = [evidence_cost(q, c, tok) for c, q in pairs]
    size = min(PAPER_N if n is None else n, len(pairs))
    key = jax.random.key(PAPER_SEED if seed is None else seed)
    drawn = set(paper_sample(key, np.asarray(ids), np.asarray(cost), n=size).query_id.tolist())
    return [(c, q) for c, q in pairs if q.query_id in drawn]


def paper_split(query_ids: Sequence[str], *, seed: int | None = None) -> dict[str, str]:
    """``query_id -> "train" | "dev" | "test"``: the paper's 350 / 75 / 75 LongMemEval split,
    scaled to the questions given (MODEL §11).

    Our reading: the sorted ids are permuted by ``jax.random.permutation`` under the seed
    (default 20260716), then cut in the proportions 350 : 75 : 75 (the dev and test shares rounded
    down, at least one question each when there are three or more); the paper does not say how
    it drew its split, so ours differs from theirs.

    References: MODEL §11 (LongMemEval split).
    """
    import jax

    from oas.real._paper_sample import PAPER_SEED

    ids = np.sort(np.unique(np.asarray(list(query_ids)).astype(str)))
    n = len(ids)
    total = sum(k for _, k in PAPER_SPLIT)
    n_dev = n_test = max(1, n * PAPER_SPLIT[1][1] // total) if n >= 3 else 0
    perm = np.asarray(
        jax.random.permutation(jax.random.key(PAPER_SEED if seed is None else seed), n)
    )
    names = np.array(["train"] * (n - n_dev - n_test) + ["dev"] * n_dev + ["test"] * n_test)
    return dict(zip(ids[perm].tolist(), names.tolist()))
