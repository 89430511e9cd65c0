"""The audited LoCoMo: LoCoMo's annotations with the errors of the locomo-audit file corrected.

The audit (github dial481/locomo-audit, ``errors.json``, CC BY-NC 4.0) lists 156 issues in the
1,540 non-adversarial questions of ``locomo10.json``: 99 answer errors (``HALLUCINATION``,
``TEMPORAL_ERROR``, ``ATTRIBUTION_ERROR``, ``AMBIGUOUS``, ``INCOMPLETE``) and 57 wrong evidence
citations (``WRONG_CITATION``). Its ``question_id`` ``locomo_{c}_qa{i}`` names conversation ``c``
(the file's order) and the 0-based index ``i`` into its ``qa`` list, which is the ``q{i}`` of our
``Query.query_id`` ``"<sample_id>/q{i}"``.

Modes (comma-combinable, ``drop`` and ``correct`` exclusive):

- ``drop``: leave out the questions with an answer error;
- ``correct``: use the audit's ``correct_answer`` where it gives one, leave out the rest;
- ``cite``: replace ``evidence`` with ``correct_evidence`` for the wrong citations.

The oracle protocol packs the cited evidence (MODEL §9), so ``cite`` changes a row's cluster and
with it the outcome under every action, not only its score.

References: MODEL §1 (queries and evidence), §9 (LoCoMo); docs/real-data.md.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from oas.real._checks import expect_list, read_json, require
from oas.real._locomo import Loaded, parse_ids
from retcon.errors import InputError

AUDIT_MODES = ("drop", "correct", "cite")
CITATION_ERROR = "WRONG_CITATION"
ANSWER_ERRORS = ("HALLUCINATION", "TEMPORAL_ERROR", "ATTRIBUTION_ERROR", "AMBIGUOUS", "INCOMPLETE")
_QID = re.compile(r"locomo_(\d+)_qa(\d+)")


class AuditEntry(NamedTuple):
    """One audited question: ``conversation`` index, ``qa`` index, the question text, the error
    type, the corrected evidence ids and the corrected answer (``""`` where not given)."""

    question_id: str
    conversation: int
    qa: int
    question: str
    error_type: str
    correct_evidence: tuple[str, ...]
    correct_answer: str


class AuditReport(NamedTuple):
    """What applying the audit changed (provenance of the sidecar and the rows).

    Attributes:
      path, sha256: the audit file read.
      modes: the modes applied, in ``AUDIT_MODES`` order.
      n_entries: entries in the file; n_answer_errors, n_citation_errors: of each kind.
      n_dropped: questions left out; n_answers_corrected; n_evidence_replaced.
      changes: ``query_id -> "dropped" | "answer" | "evidence"`` for every question touched.
    """

    path: str
    sha256: str
    modes: tuple[str, ...]
    n_entries: int
    n_answer_errors: int
    n_citation_errors: int
    n_dropped: int
    n_answers_corrected: int
    n_evidence_replaced: int
    changes: dict[str, str]

    def as_json(self) -> dict:
        d = self._asdict()
        d["modes"] = list(self.modes)
        d["changes"] = dict(sorted(self.changes.items()))
        return d


class Audited(NamedTuple):
    loaded: Loaded
    report: AuditReport


def parse_audit_modes(text: str, flag: str = "--audit-mode") -> tuple[str, ...]:
    """``"drop,cite"`` into ``("drop", "cite")`` (order of ``AUDIT_MODES``, no duplicates).

    Raises:
      InputError: an empty list, an unknown mode, or ``drop`` with ``correct``.
    """
    pieces = [p.strip() for p in str(text).split(",") if p.strip()]
    if not pieces:
        raise InputError(f"{flag} must list one or more of {', '.join(AUDIT_MODES)}; got {text!r}.")
    for p in pieces:
        if p not in AUDIT_MODES:
            raise InputError(
                f"{flag} must be a comma-separated list of {', '.join(AUDIT_MODES)}; "
                f"got unknown mode {p!r}."
            )
    if "drop" in pieces and "correct" in pieces:
        raise InputError(
            f"{flag}: 'drop' and 'correct' exclude each other (correct already drops the answer "
            f"errors without a corrected answer); got {text!r}."
        )
    return tuple(m for m in AUDIT_MODES if m in pieces)


def load_audit(path: str | Path) -> tuple[AuditEntry, ...]:
    """Read the audit's ``errors.json`` (a list of entries; see its README).

    Raises:
      InputError: missing file, invalid JSON, a missing or mistyped field, a malformed
        ``question_id`` or an unknown ``error_type``; the message names the file and the entry.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--locomo-audit {str(path)!r}: no such file.")
    name = p.name
    data = expect_list(read_json(p, "locomo-audit"), f"{name}: top level")
    if not data:  # an audit that corrects nothing is a wrong file, not a clean dataset
        raise InputError(
            f"--locomo-audit {name}: no entries; expected the audit's list of answer errors "
            "(errors.json, one object per question)."
        )
    out = []
    seen: set[str] = set()
    for k, e in enumerate(data):
        where = f"{name}: entry {k}"
        qid = str(require(e, "question_id", where, str))
        m = _QID.fullmatch(qid)
        if not m:
            raise InputError(
                f"{where}: field 'question_id' must look like 'locomo_<c>_qa<i>'; got {qid!r}."
            )
        if qid in seen:
            raise InputError(f"{where}: duplicate question_id {qid!r}.")
        seen.add(qid)
        kind = str(require(e, "error_type", where, str))
        if kind != CITATION_ERROR and kind not in ANSWER_ERRORS:
            raise InputError(
                f"{where} ({qid}): field 'error_type' must be one of "
                f"{[CITATION_ERROR, *ANSWER_ERRORS]}; got {kind!r}."
            )
        ev = e.get("correct_evidence") or []
        if not isinstance(ev, list):
            raise InputError(
                f"{where} ({qid}): field 'correct_evidence' must be a list of dia_ids."
            )
        ans = e.get("correct_answer")
        if ans is not None and not isinstance(ans, (str, int, float)):
            raise InputError(f"{where} ({qid}): field 'correct_answer' must be a string.")
        out.append(
            AuditEntry(
                qid,
                int(m.group(1)),
                int(m.group(2)),
                str(require(e, "question", where, str)),
                kind,
                tuple(str(x) for x in ev),
                "" if ans is None else str(ans).strip(),
            )
        )
    return tuple(out)


def apply_audit(
    loaded: Loaded, path: str | Path, modes: tuple[str, ...], *, sha256: str = ""
) -> Audited:
    """LoCoMo with the audit's corrections applied under ``modes``.

    Every entry must name a question that ``loaded`` holds with the same question text (the
    audit is of exactly our pinned ``locomo10.json``); otherwise the audit is of another file.

    Raises:
      InputError: an entry names no LoCoMo question, its question text differs, or (``cite``) its
        ``correct_evidence`` names no turn of the conversation.

    References: MODEL §9.
    """
    name = Path(path).name
    entries = load_audit(path)
    convs = loaded.conversations
    by_id = {q.query_id: q for c in convs for q in c.queries}
    changes: dict[str, str] = {}
    new_answer: dict[str, str] = {}
    new_evidence: dict[str, tuple[str, ...]] = {}
    n_ans = n_cite = 0
    for e in entries:
        where = f"--locomo-audit {name}: {e.question_id}"
        if e.conversation >= len(convs):
            raise InputError(
                f"{where}: conversation {e.conversation} is not in LoCoMo (it has {len(convs)})."
            )
        conv = convs[e.conversation]
        qid = f"{conv.conversation_id}/q{e.qa}"
        q = by_id.get(qid)
        if q is None:
            raise InputError(f"{where}: names no loaded LoCoMo question (expected {qid}).")
        if q.text.strip() != e.question.strip():
            raise InputError(
                f"{where}: question {e.question!r:.60} differs from LoCoMo's {q.text!r:.60}; "
                f"the audit is of another file."
            )
        if e.error_type == CITATION_ERROR:
            n_cite += 1
            if "cite" in modes:
                valid = {r.record_id for s in conv.sessions for r in s.records}
                ids, _, bad = parse_ids(list(e.correct_evidence), valid)
                if not ids:
                    raise InputError(
                        f"{where}: field 'correct_evidence' {list(e.correct_evidence)} names no "
                        f"turn of {conv.conversation_id} ({bad})."
                    )
                new_evidence[qid] = tuple(ids)
                changes[qid] = "evidence"
        else:
            n_ans += 1
            if "drop" in modes or ("correct" in modes and not e.correct_answer):
                changes[qid] = "dropped"
            elif "correct" in modes:
                new_answer[qid] = e.correct_answer
                changes[qid] = "answer"
    out = []
    for c in convs:
        qs = []
        for q in c.queries:
            if changes.get(q.query_id) == "dropped":
                continue
            if q.query_id in new_answer:
                q = replace(q, answer=new_answer[q.query_id])
            if q.query_id in new_evidence:
                q = replace(q, evidence_ids=new_evidence[q.query_id])
            qs.append(q)
        out.append(replace(c, queries=tuple(qs)))
    n_drop = sum(v == "dropped" for v in changes.values())
    report = loaded.report._replace(n_queries=loaded.report.n_queries - n_drop)
    audit = AuditReport(
        str(path),
        sha256,
        tuple(modes),
        len(entries),
        n_ans,
        n_cite,
        n_drop,
        len(new_answer),
        len(new_evidence),
        changes,
    )
    return Audited(Loaded(tuple(out), report), audit)
