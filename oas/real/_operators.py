"""Operator backends: ``dataset`` (LoCoMo's own generations) and ``extractive`` (deterministic).

Both implement ``oas.real._types.OperatorBackend``; ``make_operators("llm", ...)`` loads the third
(``oas.real.llm._backend.LLMOperators``) lazily. Operators are query-agnostic (MODEL §1): they see the
cluster ``C`` and the conversation, never the question.

``dataset`` (LoCoMo only; the exact construction, also in ``docs/real-data.md``):

* rewrite (local, ``k`` in, at most ``k`` out): for each record of ``C``, the session observations
  whose linked ``dia_id``s meet the record's turns, in the dataset's order, joined by spaces; the
  record keeps its session and date. A record none of whose turns has an observation yields no
  record: LoCoMo's generator kept no fact from it.
* merge (cross-note, one record): the observations of all records of ``C`` in cluster order, with
  duplicates removed (a fact whose content-token set equals or is contained in that of a fact
  already kept); facts are grouped by session, each group under its session date when ``C`` spans
  several sessions.
* abstract (cross-note, one record): the ``session_summary`` of each session of ``C``, in order,
  each under its date when ``C`` spans several sessions.

``extractive`` (any dataset; no model): sentences are scored by the summed idf-weighted content
tokens over the conversation (``fit``), and kept by score, in their original order:

* rewrite: per record, the best sentences up to ``rewrite_ratio`` of its words (at least one), then
  stop words dropped from them (the speaker tag kept); ``k`` in, ``k`` out.
* merge: the rewrite sentences of all records, duplicates across records removed (as above), as one
  record.
* abstract: one record of the cluster's top sentences up to ``abstract_ratio`` of its words (at
  least one), stop words dropped.

References: MODEL §1 (actions, compress ratio), §7 (rewrite cannot remove cross-record redundancy),
§9 (LoCoMo's generations are real consolidations).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from oas._text import STOPWORDS, content_tokens, normalize
from oas.real._text import split_sentences
from oas.real._types import Conversation, Record, Session, generated_record
from retcon.errors import InputError, Spell

BACKENDS = ("dataset", "extractive", "llm")


def _sessions(conversation: Conversation) -> dict[str, Session]:
    return {s.session_id: s for s in conversation.sessions}


def _dedup(facts: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop facts whose content-token set equals or is inside that of a kept fact (order kept)."""
    kept: list[tuple[str, str]] = []
    sets: list[frozenset] = []
    for session_id, fact in facts:
        s = frozenset(content_tokens(fact))
        if any(s <= k for k in sets):
            continue
        # a later, larger fact replaces the kept ones it contains
        keep_idx = [i for i, k in enumerate(sets) if not k < s]
        kept = [kept[i] for i in keep_idx]
        sets = [sets[i] for i in keep_idx]
        kept.append((session_id, fact))
        sets.append(s)
    return kept


def _grouped_record(
    action: str, cluster: Sequence[Record], items: Sequence[tuple[str, str]], dates: dict[str, str]
) -> list[Record]:
    """One record from ``(session_id, text)`` items; dated groups when several sessions."""
    if not items:
        return []
    order = list(dict.fromkeys(sid for sid, _ in items))
    if len(order) == 1:
        text = " ".join(t for _, t in items)
        return [
            generated_record(
                action, cluster, text, session_id=order[0], date=dates.get(order[0], "")
            )
        ]
    groups = [
        f"[{dates.get(sid, '')}] " + " ".join(t for s, t in items if s == sid) for sid in order
    ]
    return [generated_record(action, cluster, "\n".join(groups), session_id=order[0], date="")]


class DatasetOperators:
    """LoCoMo's own generations as the three operators (module docstring). ``name = "dataset"``."""

    name = "dataset"

    def _facts(self, record: Record, conversation: Conversation) -> list[str]:
        session = _sessions(conversation).get(record.session_id)
        if session is None:
            raise InputError(
                f"conversation {conversation.conversation_id}: record {record.record_id} names "
                f"session {record.session_id!r}, which the conversation lacks."
            )
        turns = set(record.source_ids)
        return [fact for fact, ids in session.observations if turns.intersection(ids)]

    def _check(self, conversation: Conversation) -> None:
        if not any(s.observations or s.summary for s in conversation.sessions):
            raise InputError(
                f"--operators dataset needs the dataset's own observations and session "
                f"summaries (LoCoMo); conversation {conversation.conversation_id} has none. "
                f"Use --operators extractive or llm."
            )

    def rewrite(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        self._check(conversation)
        out = []
        for r in cluster:
            facts = self._facts(r, conversation)
            if facts:
                out.append(generated_record("rewrite", [r], " ".join(facts)))
        return out

    def merge(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        self._check(conversation)
        facts = [(r.session_id, f) for r in cluster for f in self._facts(r, conversation)]
        dates = {s.session_id: s.date for s in conversation.sessions}
        return _grouped_record("merge", cluster, _dedup(facts), dates)

    def abstract(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        self._check(conversation)
        sessions = _sessions(conversation)
        items = []
        for sid in dict.fromkeys(r.session_id for r in cluster):
            summary = sessions[sid].summary if sid in sessions else ""
            if not summary.strip():
                raise InputError(
                    f"conversation {conversation.conversation_id}: session {sid} has no "
                    f"session_summary; --operators dataset needs one per session."
                )
            items.append((sid, summary.strip()))
        dates = {s.session_id: s.date for s in conversation.sessions}
        return _grouped_record("abstract", cluster, items, dates)


class ExtractiveOperators:
    """Deterministic sentence-extraction operators for any dataset (module docstring).

    Args:
      rewrite_ratio: share of each record's words whose sentences rewrite selects, in (0, 1]
        (before stop words are dropped from them, so the compress ratio ends lower).
      abstract_ratio: the same share for abstract, over the whole cluster.

    The defaults put the compress ratios in the range of LoCoMo's own generations (measured in
    ``docs/real-data.md``).
    """

    name = "extractive"

    def __init__(self, rewrite_ratio: float = 0.34, abstract_ratio: float = 0.25):
        for field, v in (("rewrite_ratio", rewrite_ratio), ("abstract_ratio", abstract_ratio)):
            if not 0.0 < float(v) <= 1.0:
                raise InputError(f"ExtractiveOperators.{field} must be in (0, 1]; got {v!r}.")
        self.rewrite_ratio = float(rewrite_ratio)
        self.abstract_ratio = float(abstract_ratio)
        self._idf_of: tuple[str, dict[str, float]] = ("", {})  # the last conversation's idf only

    def _idf(self, conversation: Conversation) -> dict[str, float]:
        """Smoothed idf ``ln((1 + N)/(1 + n_t)) + 1`` of content tokens over the conversation's turns."""
        key = conversation.conversation_id
        if self._idf_of[0] != key or not self._idf_of[1]:
            docs = [set(content_tokens(r.text)) for s in conversation.sessions for r in s.records]
            df = Counter(t for d in docs for t in d)
            n = len(docs)
            self._idf_of = (key, {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()})
        return self._idf_of[1]

    @staticmethod
    def _sentences(record: Record) -> list[str]:
        # a turn's speaker prefix is kept with its first sentence; session records split per turn
        return [s for line in record.text.split("\n") for s in split_sentences(line)]

    @staticmethod
    def _score(sentence: str, idf: dict[str, float]) -> float:
        toks = [t for t in set(normalize(sentence).split()) if t not in STOPWORDS]
        # fsum: exactly rounded, so the score does not depend on the set's order (string hashes
        # change per process); a plain sum differed in the last bits and broke ties differently
        return math.fsum(idf.get(t, 1.0) for t in toks)

    @staticmethod
    def _squeeze(sentence: str) -> str:
        """Telegraphic form: keep the speaker tag and non-stop words, drop the rest."""
        head, sep, body = sentence.partition(": ")
        if not sep or " " in head.strip():
            head, body = "", sentence
        words = [w for w in body.split() if normalize(w) and normalize(w) not in STOPWORDS]
        text = " ".join(words) if words else body
        return f"{head}: {text}" if head else text

    def _select(self, sentences: list[str], keep_tokens: int, idf: dict[str, float]) -> list[str]:
        ranked = sorted(range(len(sentences)), key=lambda i: (-self._score(sentences[i], idf), i))
        chosen, used = [], 0
        for i in ranked:
            n = len(normalize(sentences[i]).split())
            if chosen and used + n > keep_tokens:
                continue
            chosen.append(i)
            used += n
        return [sentences[i] for i in sorted(chosen)]

    def _rewrite_sentences(self, record: Record, idf) -> list[str]:
        sents = self._sentences(record)
        if not sents:
            return []
        budget = max(1, round(self.rewrite_ratio * len(normalize(record.text).split())))
        return [self._squeeze(s) for s in self._select(sents, budget, idf)]

    def rewrite(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        idf = self._idf(conversation)
        out = []
        for r in cluster:
            sents = self._rewrite_sentences(r, idf)
            if sents:
                out.append(generated_record("rewrite", [r], " ".join(sents)))
        return out

    def merge(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        idf = self._idf(conversation)
        items = [(r.session_id, s) for r in cluster for s in self._rewrite_sentences(r, idf)]
        dates = {r.session_id: r.date for r in cluster}
        return _grouped_record("merge", cluster, _dedup(items), dates)

    def abstract(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        idf = self._idf(conversation)
        items = [(r.session_id, s) for r in cluster for s in self._sentences(r)]
        if not items:
            return []
        total = sum(len(normalize(r.text).split()) for r in cluster)
        budget = max(1, round(self.abstract_ratio * total))
        chosen = set(self._select([s for _, s in items], budget, idf))
        kept = [(sid, self._squeeze(s)) for sid, s in items if s in chosen]
        dates = {r.session_id: r.date for r in cluster}
        return _grouped_record("abstract", cluster, kept, dates)


def make_operators(name: str, **opts):
    """The operator backend ``name``: ``"dataset"``, ``"extractive"`` or ``"llm"``.

    Args:
      name: backend name.
      **opts: passed to the backend's constructor (``llm``: the ``endpoint``, an
        ``EndpointConfig`` from ``resolve_endpoint``, and ``LLMOperators``'s generation options).

    Returns:
      an ``OperatorBackend``.
    """
    if name == "dataset":
        return DatasetOperators(**opts)
    if name == "extractive":
        return ExtractiveOperators(**opts)
    if name == "llm":
        from oas.real.llm._backend import LLMOperators

        return LLMOperators(**opts)
    spell = Spell("make_operators", py={"operators": "name"})
    raise InputError(f"{spell.lead('operators')} must be one of {list(BACKENDS)}; got {name!r}.")
