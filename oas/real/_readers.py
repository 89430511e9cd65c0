"""Offline readers: ``lexical``, ``sentence`` and ``topk`` (MODEL §2, §9); ``llm`` is loaded lazily.

* ``lexical``: correct (1.0) when every content token of the normalized gold answer occurs among
  the context's normalized tokens (``lexical_correct``); "is the gold answer recoverable from the
  context?". An upper bound on what a reader can do with the context.
* ``sentence``: an extractive reader. It answers with the one context sentence that shares the
  most distinct question content tokens (ties: the earliest sentence), and is correct when that
  sentence holds at least ``threshold`` (default 0.5) of the gold answer's distinct content tokens
  (token recall). With threshold 0.5 a one- or two-token answer must be matched at least half;
  ``threshold=1.0`` makes it the lexical rule restricted to the chosen sentence.
* ``topk``: an extractive reader that reads the ``k`` (default 20) context sentences sharing the
  most question content tokens (BM25; ties: the earliest) and is correct when every content token
  of the gold answer occurs among them (the lexical rule on those sentences). Unlike ``sentence``
  it keeps more than one candidate, so extra context displaces the answer only when ``k``
  better-matching sentences come with it.

All return 0.0 for an empty context.

References: MODEL §2 (reader ``p(q, X)``), §9 (readers).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from oas.real._bm25 import bm25_scores
from oas.real._lexical import answer_recall, lexical_correct
from oas.real._text import split_sentences
from oas.real._types import Query
from retcon.errors import InputError, Spell
from retcon.vocab import READERS

__all__ = [
    "LexicalReader",
    "SentenceReader",
    "TopKReader",
    "answer_recall",
    "lexical_correct",
    "make_reader",
]


@lru_cache(maxsize=1 << 15)  # (question, context) pairs: about the contexts of one LoCoMo run
def _sentence_scores(question: str, context: str) -> np.ndarray:
    """``bm25_scores(question, split_sentences(context))``, float64 and read only, kept per
    ``(question, context)``: the ``sentence`` and ``topk`` readers score the same contexts of the
    same questions (and a chance rate scores them again against a decoy answer), and the scores
    depend neither on the answer nor on the reader."""
    scores = np.asarray(bm25_scores(question, split_sentences(context)), dtype=np.float64)
    scores.flags.writeable = False
    return scores


class LexicalReader:
    """``score = 1.0`` iff ``lexical_correct(query.answer, context)``."""

    name = "lexical"

    def score(self, query: Query, context: str) -> float:
        return 1.0 if context and lexical_correct(query.answer, context) else 0.0


class SentenceReader:
    """Extractive reader: best-matching sentence, judged by gold-answer token recall.

    Args:
      threshold: the recall at or above which the answer counts as correct, in (0, 1].
    """

    name = "sentence"

    def __init__(self, threshold: float = 0.5):
        if not 0.0 < float(threshold) <= 1.0:
            raise InputError(f"SentenceReader.threshold must be in (0, 1]; got {threshold!r}.")
        self.threshold = float(threshold)

    def answer(self, question: str, context: str) -> str:
        """The context sentence sharing the most distinct question content tokens ("" if none)."""
        sentences = split_sentences(context)
        if not sentences:
            return ""
        scores = _sentence_scores(question, context)
        i = int(np.argmax(scores))  # first maximum: ties go to the earliest sentence
        return sentences[i] if scores[i] > 0 else ""

    def score(self, query: Query, context: str) -> float:
        if not context:
            return 0.0
        return (
            1.0
            if answer_recall(query.answer, self.answer(query.text, context)) >= self.threshold
            else 0.0
        )


class TopKReader:
    """Extractive reader over the ``k`` best-matching sentences, judged by the lexical rule.

    Args:
      k: sentences read, a positive integer.
    """

    name = "topk"

    def __init__(self, k: int = 20):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"TopKReader.k must be a positive integer; got {k!r}.")
        self.k = k

    def answer(self, question: str, context: str) -> str:
        """The ``k`` context sentences with the highest BM25 score against the question, joined
        in context order ("" if no sentence shares a token with the question)."""
        sentences = split_sentences(context)
        if not sentences:
            return ""
        scores = _sentence_scores(question, context)
        order = np.argsort(-scores, kind="stable")[: self.k]  # ties: the earliest sentence
        keep = sorted(int(i) for i in order if scores[i] > 0)
        return " ".join(sentences[i] for i in keep)

    def score(self, query: Query, context: str) -> float:
        if not context:
            return 0.0
        return 1.0 if lexical_correct(query.answer, self.answer(query.text, context)) else 0.0


def make_reader(name: str, **opts):
    """The reader ``name``: ``"lexical"``, ``"sentence"`` (opts: threshold), ``"topk"`` (opts: k)
    or ``"llm"`` (opts: endpoint, an ``EndpointConfig``; judge in {"lexical", "llm"}, ...)."""
    if name == "lexical":
        return LexicalReader(**opts)
    if name == "sentence":
        return SentenceReader(**opts)
    if name == "topk":
        return TopKReader(**opts)
    if name == "llm":
        from oas.real.llm._backend import LLMReader

        return LLMReader(**opts)
    spell = Spell("make_reader", py={"reader": "name"})
    raise InputError(f"{spell.lead('reader')} must be one of {list(READERS)}; got {name!r}.")
