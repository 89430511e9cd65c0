"""Text primitives shared by loaders, operators and readers: normalization, tokens, sentences.

Two different notions of "token" live here, on purpose:

* **Budget tokens** (``Tokenizer``): what a budget ``B`` counts (MODEL §1-2). The default
  ``RegexTokenizer`` needs no download: a token is a maximal run of word characters (``\\w+``) or
  one non-space punctuation character, so ``"I'm 5!"`` is ``I ' m 5 !`` (5 tokens). On LoCoMo's
  English chat it gives 1.29 tokens per whitespace-separated word (measured, see
  ``docs/real-data.md``), the same order as a BPE tokenizer on English. ``TiktokenTokenizer`` is
  used when ``tiktoken`` and its encoding files are present locally (extra ``tokenizers``).
* **Content tokens** (``normalize``, ``content_tokens``): what readers compare. Their home is
  ``oas._text`` (hashed TF-IDF in ``oas`` core needs them too).

References: MODEL §1 (record length), §2 (budgets, cut packing), §9 (readers).
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Protocol, runtime_checkable

from oas._text import content_tokens
from retcon.errors import InputError, Spell

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def stem(token: str) -> str:
    """A light suffix stripper for matching (not for gold answers): ``researching`` -> ``research``.

    Rules, first match wins: ``-ies`` -> ``-y``; drop ``-ing`` or ``-ed`` when 3+ letters remain;
    drop a final ``-s`` (not ``-ss``/``-us``/``-is``) when 3+ letters remain.
    """
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    for suffix in ("ing", "ed"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")) and len(token) >= 4:
        return token[:-1]
    return token


def match_terms(text) -> list[str]:
    """Stemmed content tokens: the terms BM25 and the sentence reader match on."""
    return [stem(t) for t in content_tokens(text)]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts budget tokens and cuts a text to a number of tokens (MODEL §2, ``cut`` packing)."""

    name: str

    def count(self, text: str) -> int:
        """Number of budget tokens in ``text``."""
        ...

    def truncate(self, text: str, n_tokens: int) -> str:
        """The longest prefix of ``text`` holding at most ``n_tokens`` tokens."""
        ...


class RegexTokenizer:
    """Default budget tokenizer: ``\\w+`` runs and single punctuation marks; no download."""

    name = "regex"
    _pattern = _TOKEN  # a token is one match (the paper's count, ``AlnumTokenizer``, has its own)

    def count(self, text: str) -> int:
        return len(self._pattern.findall(text))

    def truncate(self, text: str, n_tokens: int) -> str:
        if n_tokens <= 0:
            return ""
        matches = self._pattern.finditer(text)
        last = next(islice(matches, n_tokens - 1, None), None)  # the n-th token, skipped in C
        if last is None or next(matches, None) is None:  # n tokens or fewer: the whole text
            return text
        return text[: last.end()]

    def truncate_count(self, text: str, n_tokens: int) -> tuple[str, int]:
        """``(cut, self.count(cut))`` with ``cut = self.truncate(text, n_tokens)``, counted while
        cutting: a cut prefix ends at the end of its ``n_tokens``-th token, so it holds exactly
        ``n_tokens`` tokens; only a text of fewer tokens is counted again."""
        if n_tokens <= 0:
            return "", 0
        matches = self._pattern.finditer(text)
        last = next(islice(matches, n_tokens - 1, None), None)
        if last is None:  # fewer than n tokens: the whole text
            return text, self.count(text)
        if next(matches, None) is None:  # exactly n tokens: the whole text
            return text, n_tokens
        return text[: last.end()], n_tokens


_ALNUM = re.compile(r"[A-Za-z0-9]+")


class AlnumTokenizer(RegexTokenizer):
    """The paper's token cost: maximal runs of ASCII letters and digits (MODEL §2); ``truncate``
    keeps the prefix up to the end of the ``n``-th run."""

    name = "alnum"
    _pattern = _ALNUM


class TiktokenTokenizer:
    """BPE budget tokenizer from ``tiktoken`` (extra ``tokenizers``); encodings must be local.

    Args:
      encoding: a tiktoken encoding name, e.g. ``"cl100k_base"``. tiktoken reads encoding files
        from its cache (``TIKTOKEN_CACHE_DIR``); nothing is downloaded when they are present.
    """

    def __init__(self, encoding: str = "cl100k_base"):
        try:
            import tiktoken  # pyright: ignore[reportMissingImports]  # extra 'tokenizers'
        except ImportError:
            raise InputError(
                "--tokenizer tiktoken needs the optional extra 'tokenizers' "
                "(pip install 'retcon[tokenizers]'); got no tiktoken module."
            ) from None
        try:
            self._enc = tiktoken.get_encoding(encoding)
        except Exception as e:  # tiktoken raises network or KeyError types depending on version
            raise InputError(
                f"tiktoken encoding {encoding!r} is not available locally "
                f"(set TIKTOKEN_CACHE_DIR to a folder holding it); got {type(e).__name__}: {e}."
            ) from None
        self.name = f"tiktoken:{encoding}"

    def count(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))

    def truncate(self, text: str, n_tokens: int) -> str:
        ids = self._enc.encode(text, disallowed_special=())
        return text if len(ids) <= n_tokens else self._enc.decode(ids[: max(n_tokens, 0)])


def make_tokenizer(name: str = "regex") -> Tokenizer:
    """``"regex"`` (default), ``"alnum"`` (the paper's count) or ``"tiktoken[:<encoding>]"``."""
    if name == "regex":
        return RegexTokenizer()
    if name == "alnum":  # the paper's alphanumeric-token count (MODEL §2)
        return AlnumTokenizer()
    if name == "tiktoken" or name.startswith("tiktoken:"):
        return TiktokenTokenizer(name.partition(":")[2] or "cl100k_base")
    spell = Spell("make_tokenizer", py={"tokenizer": "name"})
    raise InputError(
        f"{spell.lead('tokenizer')} must be 'regex' or 'tiktoken[:ENCODING]'; got {name!r}."
    )


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after ``.``, ``!`` or ``?`` followed by space, and at newlines."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]
