"""The lexical rule: is the gold answer's every content token in the text? (MODEL §9).

One rule for the ``lexical`` reader (``oas.real._readers``), the ``topk`` reader and the LLM
reader's lexical judge (``oas.real.llm._backend``); it lives below both so neither imports the other.

References: MODEL §9 (readers).
"""

from __future__ import annotations

from functools import lru_cache

from oas._text import content_tokens, normalize


@lru_cache(maxsize=2048)
def _context_terms(context: str) -> frozenset[str]:
    """The normalized tokens of a context, kept for the contexts scored again (the chance decoy,
    the other readers, budgets past saturation give the same text)."""
    return frozenset(normalize(context).split())


def lexical_correct(answer, context: str) -> bool:
    """True when every content token of the normalized ``answer`` is a token of ``context``.

    Args:
      answer: the gold answer (a string, or a number as LoCoMo sometimes stores it).
      context: the text the reader sees.

    Returns:
      False when the answer has no token at all.
    """
    need = set(content_tokens(answer))
    if not need:
        return False
    return need <= _context_terms(context)


def answer_recall(answer, text: str) -> float:
    """Share of the gold answer's distinct content tokens found among ``text``'s tokens."""
    need = set(content_tokens(answer))
    if not need:
        return 0.0
    return len(need & set(normalize(text).split())) / len(need)
