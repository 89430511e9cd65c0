"""Import per-sample evaluation logs as paired data (docs/import.md; MODEL §8).

A per-sample log has one record per (question, budget, action): which conversation (group) the
question belongs to, the budget, the memory action taken (``ret``, ``merge``, ``abstract``,
``rewrite``) and whether the answer was correct. ``import_records`` pivots such records into
paired rows, one per (question, budget) with the outcomes of all four actions, and refuses
records that do not pair. Where a record sits in the log is given by a mapping of field names to
dotted paths (``budget=metadata.budget``; a number is a list index, ``*`` the one key there is).

The paired rows carry the 11 features of MODEL §8 by name. A log says nothing of the candidate
cluster's records, so the cluster features are placeholders (one record, one session, identical
embeddings) unless ``lengths`` is mapped (the cluster's record lengths, or its total tokens),
which gives ``token_pressure``, ``budget_fit_fraction``, ``constituent_count`` and
``cluster_tokens``. Every row says which in ``meta_cluster_features``. Budget and query type are
always real.

Readers: ``read_sample_records`` (JSONL, JSON, CSV: stdlib only) and ``inspect_records`` (Inspect AI eval
logs, through ``inspect_ai.log.read_eval_log``; the optional extra ``retcon[inspect]``).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from oas._checks import FEATURE_NAMES
from oas._features import budget_fit_fraction
from retcon.errors import InputError
from retcon.vocab import ACTIONS, VOCABULARIES

#: The fields every mapping needs, and those it may give.
IMPORT_REQUIRED_FIELDS = ("group", "question", "budget", "action", "correct")
IMPORT_OPTIONAL_FIELDS = ("query_type", "lengths", "id")

#: Default paths of the sources (``--from``): a preset fills the fields the user's map leaves out.
IMPORT_PRESETS: dict[str, dict[str, str]] = {
    "file": {},
    "inspect": {
        "group": "metadata.group",
        "question": "metadata.question",
        "budget": "metadata.budget",
        "action": "metadata.action",
        "correct": "scores.*.value",
        "query_type": "metadata.query_type",
        "lengths": "metadata.cluster_lengths",
    },
    "eee": {
        "group": "metadata.group_id",
        "question": "sample_id",
        "budget": "metadata.budget",
        "action": "metadata.action",
        "correct": "evaluation.score",
        "query_type": "metadata.query_type",
        "lengths": "metadata.cluster_lengths",
        "id": "metadata.instance_id",
    },
}

#: What ``correct`` may say besides a number in [0, 1] or a boolean (Inspect's letters included).
CORRECT_WORDS = {
    "c": 1.0,
    "correct": 1.0,
    "true": 1.0,
    "yes": 1.0,
    "i": 0.0,
    "incorrect": 0.0,
    "false": 0.0,
    "no": 0.0,
    "p": 0.5,
    "partial": 0.5,
    "n": 0.0,
    "noanswer": 0.0,
}


def parse_import_map(text: str | None, *, option: str = "--map") -> dict[str, str]:
    """``"group=a.b,question=id"`` -> ``{"group": "a.b", "question": "id"}``; fields checked."""
    out: dict[str, str] = {}
    if not text:
        return out
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        field, sep, path = piece.partition("=")
        field, path = field.strip(), path.strip()
        if not sep or not path:
            raise InputError(
                f"{option}: expected FIELD=PATH (e.g. budget=metadata.budget); got {piece!r}."
            )
        if field not in IMPORT_REQUIRED_FIELDS + IMPORT_OPTIONAL_FIELDS:
            raise InputError(
                f"{option}: unknown field {field!r}; expected one of "
                f"{list(IMPORT_REQUIRED_FIELDS + IMPORT_OPTIONAL_FIELDS)}."
            )
        if field in out:
            raise InputError(f"{option}: field {field!r} is mapped twice.")
        out[field] = path
    return out


def resolve(record: Any, path: str) -> Any:
    """The value at dotted ``path`` in ``record``, or raise ``KeyError(message)`` naming the keys
    found where the path stopped (``*``: the one key there; two or more is ambiguous)."""
    node = record
    walked: list[str] = []
    for part in path.split("."):
        here = ".".join(walked) or "the record"
        if isinstance(node, dict):
            if part == "*":
                keys = list(node)
                if len(keys) != 1:
                    what = "ambiguous" if keys else "empty"
                    raise KeyError(f"{path!r} is {what} at {here}: keys found {keys}")
                part = keys[0]
            elif part not in node:
                # a flat CSV or JSON record may hold the dotted name as one key
                rest = ".".join(path.split(".")[len(walked) :])
                if rest in node:
                    return node[rest]
                raise KeyError(f"no key {part!r} at {here}; keys found {list(node)[:12]}")
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit():
            i = int(part)
            if not -len(node) <= i < len(node):
                raise KeyError(f"index {i} out of range at {here} (length {len(node)})")
            node = node[i]
        else:
            raise KeyError(
                f"{here} is a {type(node).__name__}, not an object; cannot take {part!r}"
            )
        walked.append(part)
    return node


def _correct(v: Any, where: str) -> float:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(v) and 0.0 <= v <= 1.0:
        return float(v)
    if isinstance(v, str):
        s = v.strip().lower()
        if s in CORRECT_WORDS:
            return CORRECT_WORDS[s]
        try:
            return _correct(float(s), where)
        except ValueError:
            pass
    raise InputError(
        f"{where}: field 'correct' must be a number in [0, 1], a boolean or one of "
        f"{sorted(set(CORRECT_WORDS))}; got {v!r}."
    )


def _budget(v: Any, where: str) -> float:
    try:
        b = float(v)
    except (TypeError, ValueError):
        b = math.nan
    if not (math.isfinite(b) and b > 0):
        raise InputError(f"{where}: field 'budget' must be a number of tokens > 0; got {v!r}.")
    return b


def _lengths(v: Any, where: str) -> list[float]:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            pass
    vals = v if isinstance(v, list) else [v]
    try:
        out = [float(x) for x in vals]
    except (TypeError, ValueError):
        out = []
    if not out or not all(math.isfinite(x) and x > 0 for x in out):
        raise InputError(
            f"{where}: field 'lengths' must be a token count > 0 or a list of them; got {v!r}."
        )
    return out


def _action(v: Any, where: str, names: dict[str, str]) -> str:
    a = names.get(str(v), str(v))
    if a not in ACTIONS:
        raise InputError(
            f"{where}: field 'action' must be one of {list(ACTIONS)} (or a name given to "
            f"--action-names); got {v!r}."
        )
    return a


def _id(v: Any, where: str, field: str) -> str:
    if v is None or isinstance(v, (dict, list)) or str(v) == "":
        raise InputError(f"{where}: field {field!r} must be a string or number; got {v!r}.")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def _placeholder_features(budget: float, slot: int, lengths: list[float] | None) -> dict:
    f: dict[str, float] = dict.fromkeys(FEATURE_NAMES, 0.0)
    f["budget_over_512"] = budget / 512.0
    f["mean_pairwise_cosine"] = 1.0
    f["session_count"] = 1.0
    if lengths is None:
        f["budget_fit_fraction"] = 1.0
        f["constituent_count"] = 1.0
    else:
        total = float(sum(lengths))
        f["token_pressure"] = total / budget
        f["constituent_count"] = float(len(lengths))
        f["budget_fit_fraction"] = float(
            budget_fit_fraction(np.array([budget]), np.array([lengths]))[0]
        )
    f[f"query_type_{slot}"] = 1.0
    return f


def import_records(
    records: Iterable[tuple[str, Any]],
    mapping: dict[str, str],
    *,
    source: str = "records",
    action_names: dict[str, str] | None = None,
    repeats: str = "refuse",
    required: Iterable[str] = IMPORT_REQUIRED_FIELDS,
) -> list[dict]:
    """Pivot per-sample records into paired rows (docs/paired-data.md).

    Args:
      records: ``(where, record)`` pairs; ``where`` names the record in messages (``f.jsonl
        line 3``).
      mapping: field -> dotted path, for ``group``, ``question``, ``budget``, ``action``,
        ``correct`` and optionally ``query_type`` (a type of the locomo or longmemeval vocabulary;
        default the first type of locomo's, for every row), ``lengths`` and ``id`` (the row's
        ``instance_id``; default ``QUESTION@BUDGET``).
      source: the file, for the ``meta_imported_from`` column.
      action_names: the log's action names -> retcon's (``{"raw": "ret", "summary": "merge"}``).
      repeats: ``"refuse"`` a second record of the same (question, budget, action), or ``"mean"``
        (epochs, realisations: the outcome is their mean).
      required: the fields that must resolve in every record (an optional field of a preset may
        be absent).

    Returns:
      Paired rows (dicts), one per (question, budget), in order of first appearance.

    Raises:
      InputError: a field missing (naming the keys found) or malformed, a question in two groups
        or of two types, a repeat (``repeats="refuse"``), or (question, budget) pairs that lack
        an action (the first few named).

    References: MODEL §8 (paired data).
    """
    names = dict(action_names or {})
    required = tuple(required)
    for f in IMPORT_REQUIRED_FIELDS:
        if f not in mapping:
            raise InputError(
                f"--map: field {f!r} is not mapped; give {f}=PATH (e.g. {f}=metadata.{f})."
            )
    cells: dict[tuple[str, float], dict] = {}
    for where, rec in records:
        vals: dict[str, Any] = {}
        for field, path in mapping.items():
            try:
                vals[field] = resolve(rec, path)
            except KeyError as e:
                if field in required:
                    raise InputError(f"{where}: field {field!r} ({path}): {e.args[0]}.") from None
        g = _id(vals["group"], where, "group")
        q = _id(vals["question"], where, "question")
        b = _budget(vals["budget"], where)
        a = _action(vals["action"], where, names)
        y = _correct(vals["correct"], where)
        qt = vals.get("query_type")
        lengths = _lengths(vals["lengths"], where) if vals.get("lengths") is not None else None
        iid = _id(vals["id"], where, "id") if vals.get("id") is not None else f"{q}@{b:g}"
        cell = cells.setdefault(
            (q, b),
            {"group": g, "query_type": qt, "lengths": lengths, "y": {}, "where": where, "id": iid},
        )
        if cell["group"] != g:
            raise InputError(
                f"{where}: question {q!r} is in group {g!r} here and {cell['group']!r} at "
                f"{cell['where']}; a question belongs to one group."
            )
        if qt is not None and cell["query_type"] not in (None, qt):
            raise InputError(
                f"{where}: question {q!r} has query_type {qt!r} here and "
                f"{cell['query_type']!r} at {cell['where']}."
            )
        if cell["query_type"] is None:
            cell["query_type"] = qt
        if cell["lengths"] is None:
            cell["lengths"] = lengths
        if a in cell["y"] and repeats == "refuse":
            raise InputError(
                f"{where}: a second record of question {q!r}, budget {b:g}, action {a!r}; give "
                "--repeats mean to average repeats (epochs, realisations)."
            )
        cell["y"].setdefault(a, []).append(y)
    if not cells:
        raise InputError(f"{source}: no records; expected per-sample records to import.")
    unpaired = [(q, b, [a for a in ACTIONS if a not in c["y"]]) for (q, b), c in cells.items()]
    unpaired = [u for u in unpaired if u[2]]
    if unpaired:
        first = "; ".join(
            f"question {q!r} at budget {b:g} lacks {', '.join(m)}" for q, b, m in unpaired[:3]
        )
        raise InputError(
            f"{source}: {len(unpaired)} of {len(cells)} (question, budget) pairs do not pair "
            f"(each needs all of {list(ACTIONS)}): {first}."
        )
    types = {c["query_type"] for c in cells.values()} - {None}
    vocab = _vocabulary(types, source)
    rows = []
    for (q, b), c in cells.items():
        qt = c["query_type"] if c["query_type"] is not None else VOCABULARIES[vocab][0]
        slot = VOCABULARIES[vocab].index(qt)
        row = {
            "instance_id": c["id"],
            "query_id": q,
            "group_id": c["group"],
            "query_type": qt,
            "budget": b,
            **{f"y_{a}": float(np.mean(c["y"][a])) for a in ACTIONS},
            **_placeholder_features(b, slot, c["lengths"]),
            "meta_cluster_features": "placeholder" if c["lengths"] is None else "lengths",
            "meta_imported_from": str(source),
        }
        if c["lengths"] is not None:
            row["cluster_tokens"] = float(sum(c["lengths"]))
        rows.append(row)
    return rows


def _vocabulary(types: set, source: str) -> str:
    for name, vocab in VOCABULARIES.items():
        if types <= set(vocab):
            return name
    raise InputError(
        f"{source}: field 'query_type' must take values of one vocabulary "
        f"({ {k: list(v) for k, v in VOCABULARIES.items()} }); got {sorted(map(str, types))}."
    )


def read_sample_records(path: str | Path, *, option: str = "FILE") -> Iterator[tuple[str, Any]]:
    """The records of a per-sample file: ``.jsonl``/``.ndjson`` (one object a line), ``.json``
    (a list of objects, or an object holding one such list, e.g. ``{"samples": [...]}``) or
    ``.csv`` (a header; a cell holding JSON is read as JSON)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{option} {p}: no such file.")
    suffix = p.suffix.lower()
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{option} {p}: cannot read it as UTF-8 text ({e}).") from None
    if suffix in (".jsonl", ".ndjson"):
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                yield f"{p} line {i}", json.loads(line)
            except ValueError as e:
                raise InputError(f"{p} line {i}: expected one JSON object; {e}.") from None
    elif suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise InputError(f"{p}: expected JSON; {e}.") from None
        if isinstance(data, dict):
            lists = [k for k, v in data.items() if isinstance(v, list)]
            if len(lists) != 1:
                raise InputError(
                    f"{p}: expected a JSON list of records, or an object with one list of them; "
                    f"got an object with keys {list(data)[:12]}."
                )
            data = data[lists[0]]
        if not isinstance(data, list):
            raise InputError(f"{p}: expected a JSON list of records; got {type(data).__name__}.")
        for i, rec in enumerate(data):
            yield f"{p} record {i}", rec
    elif suffix == ".csv":
        reader = csv.DictReader(text.splitlines())
        for i, row in enumerate(reader, 2):
            yield f"{p} line {i}", {k: _cell(v) for k, v in row.items()}
    else:
        raise InputError(f"{option} {p}: expected a .jsonl, .ndjson, .json or .csv file.")


def _cell(v: str | None) -> Any:
    if v is None:
        return None
    s = v.strip()
    if s[:1] in "[{":
        try:
            return json.loads(s)
        except ValueError:
            return v
    return v


def inspect_records(path: str | Path, *, option: str = "FILE") -> Iterator[tuple[str, Any]]:
    """The samples of an Inspect AI eval log, read by ``inspect_ai.log.read_eval_log``.

    Each sample becomes ``{"id", "epoch", "input", "target", "metadata", "scores": {scorer:
    {"value", "answer"}}}``, and each score's value is turned into a number by Inspect's own
    ``value_to_float`` (``C``/``I``/``P``/``N`` as Inspect reads them).

    Raises:
      InputError: no such file, or ``inspect-ai`` not installed (``pip install 'retcon[inspect]'``).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{option} {p}: no such file.")
    try:
        from inspect_ai.log import read_eval_log  # pyright: ignore[reportMissingImports]  # extra inspect
        from inspect_ai.scorer import value_to_float  # pyright: ignore[reportMissingImports]
    except ImportError:
        raise InputError(
            f"--from inspect needs the package inspect-ai; install it with "
            f"pip install 'retcon[inspect]' (reading {p})."
        ) from None
    try:
        log = read_eval_log(str(p))
    except Exception as e:  # Inspect raises its own and pydantic's errors
        raise InputError(
            f"{option} {p}: not an Inspect eval log ({type(e).__name__}: {e})."
        ) from None
    to_float = value_to_float()
    samples = sorted(log.samples or [], key=lambda s: (str(s.id), s.epoch))
    for s in samples:
        if s.error is not None:
            first = str(s.error.message).strip().splitlines()[0][:200] if s.error.message else ""
            raise InputError(
                f"{p} sample {s.id} epoch {s.epoch}: the sample ended in an error ({first}); "
                "an errored sample has no outcome to import."
            )
        scores = {
            name: {"value": to_float(sc.value), "answer": sc.answer}
            for name, sc in (s.scores or {}).items()
        }
        rec = {
            "id": s.id,
            "epoch": s.epoch,
            "input": s.input if isinstance(s.input, str) else None,
            "target": s.target,
            "metadata": dict(s.metadata or {}),
            "scores": scores,
        }
        yield f"{p} sample {s.id} epoch {s.epoch}", rec
