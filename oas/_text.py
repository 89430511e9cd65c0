"""Content tokens: what readers compare and what hashed TF-IDF embeds (MODEL §8 features 6-7, §9).

SQuAD-style normalization (NFKC, lower case, punctuation to space, articles dropped) and a small
stop-word list that keeps every month name, number and negation. The loaders, operators and
readers of real data (``oas.real``) use these too; budget tokens live in ``oas.real._text``.

References: MODEL §8 (features 6, 7), §9 (readers).
"""

from __future__ import annotations

import re
import unicodedata

_PUNCT_TO_SPACE = re.compile(r"[^\w\s]|_", re.UNICODE)

# Function words only: never a month ("may", "march"), a number, or a negation ("no", "not"),
# because LoCoMo and LongMemEval gold answers are often dates, counts and yes/no.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "so",
        "as",
        "of",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "in",
        "out",
        "on",
        "off",
        "over",
        "under",
        "again",
        "further",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "too",
        "very",
        "s",
        "t",
        "can",
        "will",
        "just",
        "don",
        "should",
        "now",
        "i",
        "me",
        "my",
        "myself",
        "we",
        "our",
        "ours",
        "ourselves",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "it",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "these",
        "those",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "would",
        "could",
        "ll",
        "re",
        "ve",
        "d",
        "m",
        "o",
        "y",
        "also",
        "really",
    ]
)


_ARTICLES = frozenset(("a", "an", "the"))


def normalize(text) -> str:
    """SQuAD-style normalization: NFKC, lower case, punctuation to spaces, articles dropped.

    Args:
      text: any value; non-strings (LoCoMo has integer answers such as ``2022``) are ``str()``-ed.

    Returns:
      the normalized tokens joined by single spaces.
    """
    s = unicodedata.normalize("NFKC", str(text)).lower()
    s = _PUNCT_TO_SPACE.sub(" ", s)
    return " ".join([w for w in s.split() if w not in _ARTICLES])


def content_tokens(text) -> list[str]:
    """The normalized tokens of ``text`` that are not stop words, in order (duplicates kept).

    Falls back to all normalized tokens when every token is a stop word, so an answer such as
    ``"Yes"`` or ``"no"`` still has something to look for.
    """
    toks = normalize(text).split()
    content = [t for t in toks if t not in STOPWORDS]
    return content if content else toks
