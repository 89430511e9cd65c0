"""The paper's full-history stress test (``--design paper --protocol end-to-end``; MODEL §11).

Under the paper's design the end-to-end protocol is the paper's full-history run (its Tables 6
and 12): for each question the candidates are ranked by BM25 (``k1 = 1.2``, ``b = 0.75``) over the
whole chronological memory, every turn of the conversation (LoCoMo) or of the haystack
(LongMemEval); the top 20 turns are kept, then greedily capped at 2,048 candidate tokens (the
alphanumeric-token count of MODEL §2). Retention packs the capped list in rank order (``skip``
packing); each operator compresses the capped list, and its records, each capped at the budget
as the controlled design caps generated records, are packed in the operator's own order
(``skip``).

Where this is our reading:

* "greedily capped": the ranked turns are walked in rank order and each is kept when it still
  fits under 2,048 tokens with the ones kept before it; one that does not fit is passed over and
  the walk goes on (the ``skip`` rule of MODEL §2 applied to the candidate list).
* A turn is scored and counted as the reader sees it, rendered ``"[<date>] <text>"``
  (``oas.real._instances.render``), as in the controlled design; BM25's terms are
  ``oas.real._bm25``'s (content tokens, stop words dropped, lightly stemmed); ties keep the
  chronological order.
* The generated records are not reordered cheapest-first (the controlled design's order): the
  paper says only that an operator "compresses it into B".

References: MODEL §2 (packing, token count), §11 (full-history stress test).
"""

from __future__ import annotations

from oas.real._bm25 import bm25_scores
from oas.real._instances import render, turn_records
from oas.real._text import AlnumTokenizer
from oas.real._types import Conversation, Query, Record

#: BM25's saturation and length normalisation in the paper's full-history run (MODEL §11).
FULL_HISTORY_K1 = 1.2
FULL_HISTORY_B = 0.75
#: Turns kept from the ranking, and the candidate-token cap applied to them (MODEL §11).
FULL_HISTORY_TOP_K = 20
FULL_HISTORY_MAX_TOKENS = 2048


def full_history_candidates(
    query: Query,
    conversation: Conversation,
    *,
    top_k: int = FULL_HISTORY_TOP_K,
    max_tokens: int = FULL_HISTORY_MAX_TOKENS,
    tokenizer=None,
) -> list[Record]:
    """The capped candidate list of ``query``: its best ``top_k`` turns, in rank order, capped.

    Args:
      query: a question of ``conversation`` (only its text is used).
      conversation: the whole memory; every turn of every session is a candidate.
      top_k: turns kept from the BM25 ranking (the paper: 20).
      max_tokens: the cap on the kept turns' summed length (the paper: 2,048).
      tokenizer: counts a rendered turn's tokens (default the alphanumeric count).

    Returns:
      the kept turns in rank order (empty only when the memory has no turn or no turn fits).

    References: MODEL §11 (full-history stress test).
    """
    tok = AlnumTokenizer() if tokenizer is None else tokenizer
    turns = turn_records(conversation)
    if not turns:
        return []
    texts = [render(r) for r in turns]
    scores = bm25_scores(query.text, texts, k1=FULL_HISTORY_K1, b=FULL_HISTORY_B)
    order = sorted(range(len(turns)), key=lambda i: (-float(scores[i]), i))[:top_k]
    kept, used = [], 0
    for i in order:
        n = tok.count(texts[i])
        if used + n <= max_tokens:
            kept.append(turns[i])
            used += n
    return kept
