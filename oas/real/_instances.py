"""Oracle-evidence instances: the cluster of a query, record rendering, ordering and packing.

Protocol (MODEL §1-2, oracle evidence): the candidate cluster ``C`` is the query's evidence, as
the evidence turns (``granularity="turn"``) or the whole sessions that hold them
(``granularity="session"``, default). The memory the reader sees under action ``a`` and budget
``B`` is ``C`` itself (``ret``) or the operator's records ``g_a(C)``, ordered chronologically
(default) or by BM25 against the question, packed under ``B`` by ``theory.pack_reference``, the
same rule (and mode names, ``theory.PACKINGS``) as the simulation: ``prefix`` stops at the first record that does not fit, ``skip`` passes over it,
``cut`` (default) truncates it to the remaining budget (its first ``B - used`` tokens) and stops:
"prefix packing with the last record cut to the budget", the setting closest to the paper's
oracle protocol. A record of zero tokens adds nothing the budget counts and is left out.

A record is rendered with its session date, ``"[<date>] <text>"`` (``"<text>"`` when it has no
date), so temporal questions stay answerable; the budget counts the rendered tokens. Records are
joined by a blank line, which counts no token.

References: MODEL §1 (cluster, records), §2 (packing, ``X_B^a(q)``), §5 (only ``C`` changes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from oas.real._bm25 import bm25_order
from oas.real._text import Tokenizer
from oas.real._types import Conversation, Query, Record
from retcon.errors import InputError, Spell
from theory import check_packing, pack_reference

GRANULARITIES = ("session", "turn")
ORDERS = ("chronological", "bm25")


def session_records(conversation: Conversation) -> list[Record]:
    """One record per session: its turns joined by newlines, ``record_id`` = the session id."""
    return [
        Record(
            s.session_id,
            s.session_id,
            s.date,
            "\n".join(r.text for r in s.records),
            tuple(r.record_id for r in s.records),
        )
        for s in conversation.sessions
    ]


def turn_records(conversation: Conversation) -> list[Record]:
    return [r for s in conversation.sessions for r in s.records]


def cluster_of(
    query: Query, conversation: Conversation, granularity: str = "session"
) -> list[Record]:
    """The oracle-evidence cluster ``C`` of ``query``, in chronological order.

    Args:
      query: its ``evidence_ids`` name turns of ``conversation``.
      conversation: where the turns live.
      granularity: ``"session"`` (the sessions holding an evidence turn) or ``"turn"``.

    Returns:
      the records of ``C`` (at least one).

    Raises:
      InputError: an evidence id names no turn of the conversation.

    References: MODEL §1 (oracle-evidence cluster).
    """
    where = {r.record_id: s.session_id for s in conversation.sessions for r in s.records}
    missing = [e for e in query.evidence_ids if e not in where]
    if missing:
        raise InputError(
            f"query {query.query_id}: field 'evidence' names no turn of conversation "
            f"{conversation.conversation_id}: {missing}."
        )
    ev = set(query.evidence_ids)
    if granularity == "turn":
        return [r for r in turn_records(conversation) if r.record_id in ev]
    if granularity == "session":
        sessions = {where[e] for e in ev}
        return [r for r in session_records(conversation) if r.session_id in sessions]
    raise InputError(
        f"{Spell('cluster_of').lead('granularity')} must be one of {list(GRANULARITIES)}; "
        f"got {granularity!r}."
    )


def render(record: Record) -> str:
    """The record as the reader sees it: ``"[<date>] <text>"``, or the text when undated."""
    return f"[{record.date}] {record.text}" if record.date else record.text


class Packed(NamedTuple):
    """A packed context ``X_B^a(q)``.

    Attributes:
      context: the text handed to the reader.
      tokens: budget tokens used (<= budget).
      n_full: records packed whole.
      n_cut: 1 when a record was truncated (``cut`` packing), else 0.
    """

    context: str
    tokens: int
    n_full: int
    n_cut: int


def order_records(texts: Sequence[str], question: str, order: str = "chronological") -> list[int]:
    """Retriever order of the rendered records: as given (chronological) or BM25 descending."""
    if order == "chronological":
        return list(range(len(texts)))
    if order == "bm25":
        return bm25_order(question, texts)
    raise InputError(
        f"{Spell('order_records').lead('order')} must be one of {list(ORDERS)}; got {order!r}."
    )


def pack_texts(
    texts: Sequence[str], lengths: Sequence[int], budget: int, packing: str, tokenizer: Tokenizer
) -> Packed:
    """Pack rendered records, already in retriever order, under ``budget`` tokens.

    Args:
      texts: rendered records in retriever order.
      lengths: their token counts under ``tokenizer``.
      budget: tokens (> 0).
      packing: ``"prefix"``, ``"skip"`` or ``"cut"`` (module docstring).
      tokenizer: counts and truncates tokens.

    Returns:
      ``Packed``.

    References: MODEL §2 (packing).
    """
    check_packing(Spell("pack_texts").lead("packing"), packing)
    kept = pack_reference(np.asarray(lengths, dtype=np.float64).reshape(-1), budget, packing)
    parts: list[str] = []
    used = n_full = n_cut = 0
    # a tokenizer that counts while it cuts (``RegexTokenizer``) saves counting the cut again
    truncate_count = getattr(tokenizer, "truncate_count", None)
    for text, n, k in zip(texts, lengths, kept):
        if n > 0 and k >= n:
            parts.append(text)
            used += n
            n_full += 1
        elif k > 0:  # the record cut packing truncates to the remaining budget
            if truncate_count is not None:
                cut, cut_tokens = truncate_count(text, int(k))
            else:
                cut = tokenizer.truncate(text, int(k))
                cut_tokens = tokenizer.count(cut) if cut else 0
            if cut:
                parts.append(cut)
                used += cut_tokens
                n_cut = 1
    return Packed("\n\n".join(parts), used, n_full, n_cut)
