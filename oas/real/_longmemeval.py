"""LongMemEval loader: ``longmemeval_oracle.json`` / ``_s`` / ``_m`` into ``Conversation``s (MODEL §9).

Each instance has its own haystack, so each instance is one conversation (``conversation_id`` =
``question_id``) with one query. Records are turns, ``record_id = "<session_id>:<turn number>"``
(1-based) and text ``"<role>: <content>"``; each session keeps its ``haystack_dates`` entry.

Evidence: the turns marked ``has_answer: true`` inside the ``answer_session_ids`` sessions; an
answer session with no marked turn contributes all its turns (the dataset marks turns for most but
not all instances). Query types: ``retcon.vocab.LONGMEMEVAL_TYPE`` (MODEL §9:
single-session-{user,assistant,preference} -> single-session). Abstention questions (``question_id``
ending in ``_abs``) have no answer to find in the context; they are excluded unless asked for, and
counted.

Where to get the files: the LongMemEval repository (xiaowu0162/LongMemEval) links the release on
Hugging Face (dataset ``xiaowu0162/longmemeval``); see ``docs/real-data.md``.

References: MODEL §1, §9 (LongMemEval).
"""

from __future__ import annotations

from pathlib import Path

from oas.real._checks import expect_list, read_json, require, require_new_id
from oas.real._locomo import Loaded, LoadReport
from oas.real._types import Conversation, Query, Record, Session
from retcon.errors import InputError
from retcon.vocab import LONGMEMEVAL_TYPE


def load_longmemeval(path: str | Path, *, include_abstention: bool = False) -> Loaded:
    """Load a LongMemEval file (oracle, ``_s`` or ``_m``) into one conversation per instance.

    Args:
      path: the JSON file (a list of instances).
      include_abstention: keep ``_abs`` questions (their type is mapped as usual).

    Returns:
      ``Loaded(conversations, report)``.

    Raises:
      InputError: invalid JSON, a missing or mistyped field, an unknown ``question_type``,
      haystack lists of different lengths, or an answer session id that names no session; the
      message names the instance index, its ``question_id`` and the field.

    References: MODEL §9.
    """
    name = Path(path).name
    data = expect_list(read_json(path, "LongMemEval"), f"{name}: top level")
    conversations = []
    n_excl = n_noev = 0
    seen: set[str] = set()
    for ii, inst in enumerate(data):
        qid, where = require_new_id(inst, "question_id", f"{name}: instance {ii}", seen)
        source_type = require(inst, "question_type", where, str)
        if source_type not in LONGMEMEVAL_TYPE:
            raise InputError(
                f"{where}: field 'question_type' must be one of {sorted(LONGMEMEVAL_TYPE)}; "
                f"got {source_type!r}."
            )
        question = require(inst, "question", where, str)
        answer = require(inst, "answer", where, (str, int, float))
        haystack = require(inst, "haystack_sessions", where, list)
        session_ids = [str(s) for s in require(inst, "haystack_session_ids", where, list)]
        dates = [str(d) for d in require(inst, "haystack_dates", where, list)]
        answer_ids = [str(s) for s in require(inst, "answer_session_ids", where, list)]
        if not (len(haystack) == len(session_ids) == len(dates)):
            raise InputError(
                f"{where}: fields 'haystack_sessions', 'haystack_session_ids' and "
                f"'haystack_dates' must have equal lengths; got {len(haystack)}, "
                f"{len(session_ids)}, {len(dates)}."
            )
        missing = [s for s in answer_ids if s not in session_ids]
        if missing:
            raise InputError(
                f"{where}: field 'answer_session_ids' names no haystack session: {missing}."
            )
        if qid.endswith("_abs") and not include_abstention:
            n_excl += 1
            continue
        sessions = []
        evidence: list[str] = []
        for si, (sid, date, turns) in enumerate(zip(session_ids, dates, haystack)):
            records = []
            marked = []
            for ti, turn in enumerate(
                expect_list(turns, f"{where} field 'haystack_sessions[{si}]'")
            ):
                tw = f"{where} field 'haystack_sessions[{si}][{ti}]'"
                role = require(turn, "role", tw, str)
                content = require(turn, "content", tw, str)
                rid = f"{sid}:{ti + 1}"
                records.append(Record(rid, sid, date, f"{role}: {content}", (rid,)))
                if turn.get("has_answer") is True:
                    marked.append(rid)
            if sid in answer_ids:
                evidence.extend(marked if marked else [r.record_id for r in records])
            sessions.append(Session(sid, date, tuple(records)))
        if not evidence:
            n_noev += 1
            continue
        query = Query(
            qid,
            qid,
            question,
            str(answer),
            LONGMEMEVAL_TYPE[source_type],
            tuple(evidence),
            date=str(inst.get("question_date", "")),
            source_type=source_type,
        )
        conversations.append(Conversation(qid, tuple(sessions), (query,)))
    report = LoadReport(
        len(conversations), n_excl, "LongMemEval abstention (_abs)", 0, 0, n_noev, 0, ()
    )
    return Loaded(tuple(conversations), report)
