"""LoCoMo loader: ``locomo10.json`` into ``Conversation``s of dated sessions of turns (MODEL §9).

Evidence-id policy (documented in ``docs/real-data.md``). The released file writes a few evidence
and observation ids loosely: ``"D8:6; D9:17"`` (two ids in one string), ``"D9:1 D4:4 D4:6"``,
``"D:11:26"``, ``"D30:05"``, and a few name no turn at all (``"D"``, ``"D10:19"`` where session 10
has fewer turns). Every id string is parsed with the pattern ``D<session>:<turn>`` (separators
``;``, ``,`` or spaces between ids, an extra ``:`` after ``D`` and leading zeros tolerated) and the
canonical ``D<s>:<t>`` is kept when it names a turn. Ids that name no turn are dropped and counted;
a question left with no evidence is skipped and counted. ``strict=True`` turns every repair or drop
into an ``InputError`` naming the conversation, the question index and the field.

Query types: ``retcon.vocab.LOCOMO_CATEGORY``, the mapping of the benchmark's own evaluation code
(``task_eval`` in snap-research/locomo): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop;
category 5 (adversarial, no ``answer``) is excluded unless asked for, and counted.

References: MODEL §1 (records, queries, evidence), §9 (LoCoMo).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from oas.real._checks import expect_list, read_json, require, require_new_id
from oas.real._types import Conversation, Query, Record, Session
from retcon.errors import InputError
from retcon.vocab import LOCOMO_ADVERSARIAL, LOCOMO_CATEGORY

_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")


class LoadReport(NamedTuple):
    """What a loader kept, skipped and repaired (every count is over the whole file).

    Attributes:
      n_queries: questions kept.
      n_excluded: questions excluded by type (LoCoMo category 5; LongMemEval ``_abs``).
      excluded_reason: what ``n_excluded`` counts.
      n_evidence_repaired: evidence strings rewritten to canonical ids (split, ``D:``, zeros).
      n_evidence_dropped: evidence ids that name no turn, dropped.
      n_no_evidence: questions skipped because none of their evidence names a turn.
      n_observation_ids_dropped: observation links that name no turn, dropped (LoCoMo).
      dropped: up to 20 ``"where: id"`` strings, for the user to check.
    """

    n_queries: int
    n_excluded: int
    excluded_reason: str
    n_evidence_repaired: int
    n_evidence_dropped: int
    n_no_evidence: int
    n_observation_ids_dropped: int
    dropped: tuple[str, ...]


class Loaded(NamedTuple):
    conversations: tuple[Conversation, ...]
    report: LoadReport


def parse_ids(raw, valid: set[str]) -> tuple[list[str], bool, list[str]]:
    """Canonical turn ids in an id string or list; returns ``(ids, repaired, unresolved)``.

    Args:
      raw: a string such as ``"D1:3"`` or ``"D8:6; D9:17"``, or a list of such strings.
      valid: the turn ids of the conversation.

    Returns:
      ids naming a turn (order kept, duplicates removed); whether the input differed from that
      list of canonical ids; the pieces that name no turn.
    """
    pieces = raw if isinstance(raw, list) else [raw]
    ids: list[str] = []
    unresolved: list[str] = []
    repaired = False
    for piece in pieces:
        s = str(piece)
        found = list(_ID.finditer(s))
        rest = _ID.sub(" ", s).replace(";", " ").replace(",", " ").split()
        unresolved.extend(rest)
        for m in found:
            cid = f"D{int(m.group(1))}:{int(m.group(2))}"
            if cid != s:
                repaired = True
            if cid not in valid:
                unresolved.append(m.group(0))
            elif cid not in ids:
                ids.append(cid)
    return ids, repaired, unresolved


def load_locomo(
    path: str | Path, *, include_adversarial: bool = False, strict: bool = False
) -> Loaded:
    """Load ``locomo10.json`` into conversations with their sessions, turns and questions.

    Args:
      path: the JSON file (a list of conversations).
      include_adversarial: keep category-5 questions (type ``"adversarial"``, answer ``""``);
        they have no 4-way type, so paired data never holds them.
      strict: raise on any evidence or observation id that had to be repaired or dropped.

    Returns:
      ``Loaded(conversations, report)``; records are turns with ``record_id = dia_id``, the text
      ``"<speaker>: <text>"`` plus ``" [shares a photo: <blip_caption>]"`` when the turn has one,
      and the session's ``date_time`` as ``date``.

    Raises:
      InputError: invalid JSON, a missing or mistyped field, a category outside 1-5, or (strict)
      an id to repair or drop; the message names the conversation, question index and field.

    References: MODEL §1, §9.
    """
    name = Path(path).name
    data = expect_list(read_json(path, "LoCoMo"), f"{name}: top level")
    conversations = []
    n_q = n_excl = n_rep = n_drop = n_noev = n_obs_drop = 0
    dropped: list[str] = []
    seen_ids: set[str] = set()
    for ci, item in enumerate(data):
        cid, where = require_new_id(item, "sample_id", f"{name}: conversation {ci}", seen_ids)
        conv = require(item, "conversation", where, dict)
        qa = require(item, "qa", where, list)
        observations = item.get("observation") or {}
        summaries = item.get("session_summary") or {}
        if not isinstance(observations, dict) or not isinstance(summaries, dict):
            raise InputError(
                f"{where}: fields 'observation' and 'session_summary' must be objects."
            )

        sessions = []
        valid: set[str] = set()
        numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
        raw_sessions = []
        for n in numbers:
            turns = expect_list(conv[f"session_{n}"], f"{where} field 'conversation.session_{n}'")
            if not turns:
                continue
            date = str(
                require(conv, f"session_{n}_date_time", f"{where} field 'conversation'", str)
            )
            records = []
            for ti, turn in enumerate(turns):
                tw = f"{where} session_{n} turn {ti}"
                dia = str(require(turn, "dia_id", tw, str))
                speaker = str(require(turn, "speaker", tw, str))
                text = str(require(turn, "text", tw, str))
                caption = turn.get("blip_caption")
                if caption:
                    text = f"{text} [shares a photo: {caption}]"
                if dia in valid:
                    raise InputError(f"{tw}: duplicate dia_id {dia!r}.")
                valid.add(dia)
                records.append(Record(dia, f"S{n}", date, f"{speaker}: {text}", (dia,)))
            raw_sessions.append((n, date, tuple(records)))

        for n, date, records in raw_sessions:
            obs = []
            facts_by_speaker = observations.get(f"session_{n}_observation", {}) or {}
            if not isinstance(facts_by_speaker, dict):
                raise InputError(
                    f"{where} field 'observation.session_{n}_observation': expected an object."
                )
            for speaker, facts in facts_by_speaker.items():
                for fi, fact in enumerate(
                    expect_list(
                        facts, f"{where} field 'observation.session_{n}_observation.{speaker}'"
                    )
                ):
                    fw = f"{where} field 'observation.session_{n}_observation.{speaker}[{fi}]'"
                    if not isinstance(fact, list) or len(fact) != 2 or not isinstance(fact[0], str):
                        raise InputError(f"{fw}: expected [fact, dia_id]; got {fact!r:.80}.")
                    ids, repaired, bad = parse_ids(fact[1], valid)
                    if bad:
                        if strict:
                            raise InputError(f"{fw}: dia_id {fact[1]!r} names no turn ({bad}).")
                        n_obs_drop += len(bad)
                    if ids:
                        obs.append((fact[0], tuple(ids)))
            summary = summaries.get(f"session_{n}_summary", "")
            if not isinstance(summary, str):
                raise InputError(
                    f"{where} field 'session_summary.session_{n}_summary': expected a string."
                )
            sessions.append(Session(f"S{n}", date, records, summary, tuple(obs)))

        queries = []
        for qi, q in enumerate(qa):
            qw = f"{where} qa {qi}"
            question = str(require(q, "question", qw, str))
            category = require(q, "category", qw, int)
            evidence = require(q, "evidence", qw, list)
            if category == LOCOMO_ADVERSARIAL:
                if not include_adversarial:
                    n_excl += 1
                    continue
                qtype, answer = "adversarial", ""
            elif category in LOCOMO_CATEGORY:
                qtype = LOCOMO_CATEGORY[category]
                answer = require(q, "answer", qw, (str, int, float))
            else:
                raise InputError(f"{qw}: field 'category' must be in 1..5; got {category!r}.")
            ids, repaired, bad = parse_ids(evidence, valid)
            if strict and (repaired or bad):
                raise InputError(
                    f"{qw}: field 'evidence' {evidence!r} "
                    + (f"names no turn: {bad}." if bad else "is not a list of canonical dia_ids.")
                )
            n_rep += int(repaired)
            n_drop += len(bad)
            dropped.extend(f"{qw} evidence {b!r}" for b in bad)
            if not ids:
                n_noev += 1
                continue
            queries.append(
                Query(
                    f"{cid}/q{qi}",
                    cid,
                    question,
                    str(answer),
                    qtype,
                    tuple(ids),
                    source_type=str(category),
                )
            )
        n_q += len(queries)
        conversations.append(Conversation(cid, tuple(sessions), tuple(queries)))
    report = LoadReport(
        n_q,
        n_excl,
        "LoCoMo category 5 (adversarial)",
        n_rep,
        n_drop,
        n_noev,
        n_obs_drop,
        tuple(dropped[:20]),
    )
    return Loaded(tuple(conversations), report)
