"""Common types for real conversational memory (MODEL §1, §9) and the two backend interfaces.

Datasets load into ``Conversation``s of ``Session``s of ``Record``s, with ``Query``s over them.
Operator backends (``dataset``, ``extractive``, ``llm``) and readers (``lexical``, ``sentence``,
``llm``) implement the two Protocols below, so instance building never knows which one it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from retcon.errors import InputError


@dataclass(frozen=True)
class Record:
    """One memory record ``m`` (MODEL §1): a turn, a whole session, or a generated record.

    Attributes:
      record_id: unique within its conversation (a LoCoMo ``dia_id``, a session id, or a
        generated id such as ``merge(D1:3,D1:5)``).
      session_id: the session the record belongs to (a generated record keeps its first source's).
      date: the session's date as the dataset writes it ("" when unknown); kept with the record so
        temporal questions stay answerable.
      text: the record's text.
      source_ids: the raw record ids this record was made from (itself for a raw record).
      generated_by: "" for a raw record, else the action that made it (merge/abstract/rewrite).
    """

    record_id: str
    session_id: str
    date: str
    text: str
    source_ids: tuple[str, ...] = ()
    generated_by: str = ""


def generated_record(
    action: str,
    sources: Sequence[Record],
    text: str,
    *,
    session_id: str | None = None,
    date: str | None = None,
) -> Record:
    """The one builder of a generated record's provenance (MODEL §1), for every operator backend.

    Args:
      action: the operator that made it (``merge``, ``abstract``, ``rewrite``).
      sources: the records it was made from, in order (one for ``rewrite``).
      text: its text.
      session_id, date: default the first source's; a record grouped over several sessions
        passes its own (``date=""`` when no single date holds).

    Returns:
      ``Record`` with id ``action(id1,id2,...)`` over the sources' ids, ``source_ids`` the raw
      record ids behind the sources (each once, in order; a source without any counts as its own
      id) and ``generated_by = action``.
    """
    if not sources:
        raise InputError(f"generated_record: {action} needs at least one source record.")
    raw_ids = tuple(dict.fromkeys(i for r in sources for i in (r.source_ids or (r.record_id,))))
    first = sources[0]
    return Record(
        record_id=f"{action}({','.join(r.record_id for r in sources)})",
        session_id=first.session_id if session_id is None else session_id,
        date=first.date if date is None else date,
        text=text,
        source_ids=raw_ids,
        generated_by=action,
    )


@dataclass(frozen=True)
class Session:
    session_id: str
    date: str
    records: tuple[Record, ...]
    summary: str = ""  # a dataset's own LLM-written session summary (LoCoMo), if any
    observations: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (fact, linked record ids)


@dataclass(frozen=True)
class Query:
    """A question ``q`` with its 4-way type ``t(q)`` and evidence ``E_q`` (MODEL §1, §9)."""

    query_id: str
    conversation_id: str
    text: str
    answer: str
    query_type: str
    evidence_ids: tuple[str, ...]
    date: str = ""  # the question's date, where the dataset gives one (LongMemEval)
    source_type: str = ""  # the dataset's own label (LoCoMo category, LongMemEval question_type)


@dataclass(frozen=True)
class Conversation:
    conversation_id: str
    sessions: tuple[Session, ...]
    queries: tuple[Query, ...] = field(default=())


@runtime_checkable
class OperatorBackend(Protocol):
    """Makes the generated records of one action for a cluster ``C`` (MODEL §1).

    Operators are query-agnostic: consolidation happens when memory is written, before any
    question. ``conversation`` gives access to dataset-side material (LoCoMo observations and
    summaries) for the ``dataset`` backend; other backends may ignore it.
    """

    name: str

    def rewrite(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        """Local: each record compressed on its own, ``k`` records in, ``k`` out."""
        ...

    def merge(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        """Cross-note: one record keeping the details of all constituents, redundancy dropped."""
        ...

    def abstract(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        """Cross-note: one more general record; most compression, least detail."""
        ...


@runtime_checkable
class Reader(Protocol):
    """Turns a context into an outcome ``y`` in [0, 1] for a query (MODEL §2, §9)."""

    name: str

    def score(self, query: Query, context: str) -> float:
        """1.0 when the reader answers ``query`` correctly from ``context``, else 0.0 (or a
        probability in between for a soft reader)."""
        ...
