"""What consolidation loses, by fact type: the share of a raw cluster's facts kept in a record.

MODEL §1 gives each operator a fidelity ``phi``: the answer quality of its record relative to the
raw records. This module measures one observable piece of it, fact survival: for each type of
fact a paraphrase tends to lose (dates and times, numbers, proper names, identifiers and paths),
the share of the facts found in the raw cluster's text that are found again in an operator's
record. Facts are found by the documented regular expressions below (no model, no download),
normalised so that a reworded date (``8 May, 2023`` / ``May 8 2023``) or a spelled number
(``three`` / ``3``) still matches.

Types (``FACT_TYPES``) and what each regular expression takes:

* ``dates``: absolute dates with a month name (``8 May, 2023``, ``May 8 2023``, ``May 2023``,
  ``8 May``) -> ``[YYYY-]MM[-DD]``; numeric dates ``2023-05-08`` and ``8/5/2023`` (as written);
  clock times ``1:56 pm``, ``13:05`` -> ``HH:MM``; years 1900-2099; weekday and month names alone;
  relative expressions (``yesterday``, ``tomorrow``, ``tonight``, ``last week``, ``next month``,
  ``this weekend``, ``two days ago``, ``a few years ago``), lower-cased.
* ``numbers``: numerals outside dates and times (``3``, ``1,500``, ``2.5``, ``20%``) and the number
  words zero to twenty, the tens (``twenty-one`` as 21) and ``hundred``/``thousand``/``million``
  (as digits).
* ``names``: capitalised words that the raw cluster writes capitalised at least once where no
  sentence starts (so ``Hey`` or ``Wow`` opening a turn are not names), never in lower case, and
  that are not stop words, month or weekday names, nor ``I``; a name survives when the record
  contains the word in any case.
* ``identifiers``: URLs, e-mail addresses, paths (``~/notes.md``, ``src/app.py``), ``@handles``
  and ``#tags``, and tokens that mix letters and digits (``A113``, ``v2``, ``B-52``).

A cluster's survival of type ``t`` under operator ``o`` is ``|F_t(raw) & F_t(o)| / |F_t(raw)|``,
clusters without a fact of type ``t`` left out. Over a dataset: per conversation the pooled share
(surviving facts over facts), then the mean over conversations with the Student-t interval of
``retcon.inference`` (one value per conversation, ``G - 1`` df), clipped to [0, 1].

References: MODEL §1 (operators, fidelity), §9 (LoCoMo's generations are real consolidations).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import numpy as np

from oas._text import STOPWORDS
from retcon.errors import InputError
from retcon.inference import group_t_interval

#: The fact types, in report order, and the word each is written with on the command line.
FACT_TYPES = ("dates", "numbers", "names", "identifiers")

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?:[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d\d"

_DAY_MONTH = re.compile(rf"\b(?P<d>{_DAY})\s+(?P<m>{_MONTH})(?:,?\s+(?P<y>{_YEAR}))?\b", re.I)
_MONTH_DAY = re.compile(
    rf"\b(?P<m>{_MONTH})\s+(?P<d>{_DAY})(?!\d)(?:,?\s+(?P<y>{_YEAR}))?\b(?!:)", re.I
)
_MONTH_YEAR = re.compile(rf"\b(?P<m>{_MONTH}),?\s+(?P<y>{_YEAR})\b", re.I)
_ISO_DATE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b")
_NUM_DATE = re.compile(r"\b[0-3]?\d/[01]?\d/(?:19|20)?\d\d\b")
_TIME = re.compile(r"\b(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)(?:\s*(?P<ap>[ap])\.?m\.?)?", re.I)
_TIME_AMPM = re.compile(r"\b(?P<h>1[0-2]|0?[1-9])\s*(?P<ap>[ap])\.?m\b\.?", re.I)
_YEAR_ALONE = re.compile(rf"\b{_YEAR}\b")
_NAMED = re.compile(rf"\b(?:{_MONTH}|" + "|".join(_WEEKDAYS) + r")\b", re.I)
_COUNT_WORD = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|several|\d+)"
_UNIT = r"(?:minutes?|hours?|days?|nights?|weeks?|weekends?|months?|years?|decades?)"
_RELATIVE = re.compile(
    r"\b(?:yesterday|tomorrow|tonight|today|"
    rf"(?:last|next|this|past|coming)\s+(?:{_UNIT[3:-1]}|"
    + "|".join(_WEEKDAYS)
    + r"|summer|winter|spring|fall|autumn)|"
    rf"{_COUNT_WORD}\s+{_UNIT}\s+(?:ago|later|before|earlier))\b",
    re.I,
)

_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_NUMBER_WORDS.update(
    {
        w: 10 * (i + 3)
        for i, w in enumerate(["thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])
    }
)
_NUMBER_WORDS.update({"hundred": 100, "thousand": 1000, "million": 1000000})
_NUMERAL = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|(?<![\w.])\d+(?:\.\d+)?%?")
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_UNITS = "one|two|three|four|five|six|seven|eight|nine"
_COMPOUND = re.compile(rf"\b({_TENS})[- ]({_UNITS})\b", re.I)
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.I)

_URL = re.compile(r"\bhttps?://[^\s)\]>\"']+", re.I)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+")
_HANDLE = re.compile(r"(?<![\w@])[@#][A-Za-z_]\w+")
_MIXED = re.compile(r"\b(?=[A-Za-z-]*\d)(?=[\d-]*[A-Za-z])[A-Za-z\d]+(?:-[A-Za-z\d]+)*\b")

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_WORD = re.compile(r"[A-Za-z]+")


def _clean(s: str) -> str:
    return re.sub(r"\s+", " ", s.strip().lower().rstrip("."))


def _day(d: str) -> int:
    return int(re.sub(r"\D", "", d))


def _date_facts(text: str) -> tuple[set[str], list[tuple[int, int]]]:
    """Date and time facts of ``text`` and the character spans they cover."""
    facts: set[str] = set()
    spans: list[tuple[int, int]] = []

    def taken(m) -> bool:
        return any(a < m.end() and m.start() < b for a, b in spans)

    for rx in (_DAY_MONTH, _MONTH_DAY):
        for m in rx.finditer(text):
            if taken(m):
                continue
            day = _day(m.group("d"))
            if not 1 <= day <= 31:
                continue
            month = _MONTHS[m.group("m").lower().rstrip(".")]
            year = m.group("y")
            facts.add(f"{year}-{month:02d}-{day:02d}" if year else f"{month:02d}-{day:02d}")
            spans.append(m.span())
    for m in _MONTH_YEAR.finditer(text):
        if not taken(m):
            facts.add(f"{m.group('y')}-{_MONTHS[m.group('m').lower().rstrip('.')]:02d}")
            spans.append(m.span())
    for rx in (_ISO_DATE, _NUM_DATE):
        for m in rx.finditer(text):
            if not taken(m):
                facts.add(m.group(0))
                spans.append(m.span())
    for m in _TIME.finditer(text):
        if taken(m):
            continue
        h = int(m.group("h")) % 24
        ap = (m.group("ap") or "").lower()
        h = h % 12 + (12 if ap == "p" else 0) if ap else h
        facts.add(f"{h:02d}:{m.group('mi')}")
        spans.append(m.span())
    for m in _TIME_AMPM.finditer(text):
        if not taken(m):
            h = int(m.group("h")) % 12 + (12 if m.group("ap").lower() == "p" else 0)
            facts.add(f"{h:02d}:00")
            spans.append(m.span())
    for rx in (_RELATIVE, _YEAR_ALONE, _NAMED):
        for m in rx.finditer(text):
            if not taken(m):
                word = _clean(m.group(0))
                facts.add(str(_MONTHS.get(word, word)) if rx is _NAMED else word)
                spans.append(m.span())
    return facts, spans


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _number_facts(text: str) -> set[str]:
    out = set()
    spans = []
    for m in _COMPOUND.finditer(text):
        out.add(str(_NUMBER_WORDS[m.group(1).lower()] + _NUMBER_WORDS[m.group(2).lower()]))
        spans.append(m.span())
    text = _mask(text, spans)
    for m in _NUMERAL.finditer(text):
        out.add(m.group(0).replace(",", ""))
    for m in _NUMBER_WORD.finditer(text):
        out.add(str(_NUMBER_WORDS[m.group(0).lower()]))
    return out


def _identifier_facts(text: str) -> tuple[set[str], list[tuple[int, int]]]:
    facts: set[str] = set()
    spans: list[tuple[int, int]] = []
    for rx in (_URL, _EMAIL, _PATH, _HANDLE, _MIXED):
        for m in rx.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in spans):
                continue
            s = m.group(0).rstrip(".,;:")
            if rx is _PATH and "/" not in s:
                continue
            facts.add(s.lower())
            spans.append(m.span())
    return facts, spans


def _name_facts(text: str, lower_words: set[str]) -> set[str]:
    """Capitalised words written so at least once where a sentence does not start (after
    another word, not after ``.``, ``!``, ``?``, ``:``, a line break or a bracket), never in
    lower case (``lower_words``), and not stop words, month or weekday names, nor ``I``."""
    out = set()
    skip = STOPWORDS | set(_MONTHS) | set(_WEEKDAYS) | {"i"}
    for m in _CAPITALISED.finditer(text):
        before = text[: m.start()].rstrip(" \t\"'(")
        if not before or before[-1] in ".!?:\n[]":
            continue
        w = m.group(0).lower()
        if w not in skip and w not in lower_words:
            out.add(w)
    return out


def extract_facts(text: str, *, lower_words: set[str] | None = None) -> dict[str, set[str]]:
    """The facts of each type in ``text``, normalised (module docstring).

    Args:
      text: any text.
      lower_words: words to refuse as names (those the raw cluster writes in lower case);
        default: the lower-case words of ``text`` itself.

    Returns:
      ``{type: set of normalised facts}`` for every type of ``FACT_TYPES``.
    """
    dates, spans = _date_facts(text)
    idents, id_spans = _identifier_facts(_mask(text, spans))
    rest = _mask(text, spans + id_spans)
    lw = {w for w in _WORD.findall(text) if w.islower()} if lower_words is None else lower_words
    return {
        "dates": dates,
        "numbers": _number_facts(rest),
        "names": _name_facts(rest, lw),
        "identifiers": idents,
    }


def survives(
    fact_type: str, fact: str, record_facts: dict[str, set[str]], record_text: str
) -> bool:
    """Whether a raw fact is found in a record: the same normalised fact, or (names) the name's
    words in the record's text in any case."""
    if fact in record_facts[fact_type]:
        return True
    if fact_type == "names":
        return fact in {w.lower() for w in _WORD.findall(record_text)}
    return False


class ClusterSurvival(NamedTuple):
    """One cluster under one operator: ``counts[t] = (facts in the raw cluster, surviving)``,
    ``lost[t]`` the facts not found, ``queries`` the questions whose oracle cluster it is."""

    group: str
    operator: str
    counts: dict[str, tuple[int, int]]
    lost: dict[str, list[str]]
    queries: tuple[str, ...] = ()


def cluster_survival(
    raw_text: str, record_text: str, *, group: str, operator: str
) -> ClusterSurvival:
    """Facts of ``raw_text`` found again in ``record_text``, per type (``extract_facts``)."""
    lower = {w for w in _WORD.findall(raw_text) if w.islower()}
    raw = extract_facts(raw_text, lower_words=lower)
    rec = extract_facts(record_text, lower_words=set())
    counts, lost = {}, {}
    for t in FACT_TYPES:
        kept = [f for f in sorted(raw[t]) if survives(t, f, rec, record_text)]
        counts[t] = (len(raw[t]), len(kept))
        lost[t] = [f for f in sorted(raw[t]) if f not in kept]
    return ClusterSurvival(group, operator, counts, lost)


class TypeSurvival(NamedTuple):
    """Survival of one fact type under one operator over a dataset.

    Attributes:
      share, lower, upper: mean over groups of each group's pooled share (surviving / facts) and
        its Student-t interval on ``groups - 1`` df (NaN bounds with fewer than two groups).
      facts, kept: facts in the raw clusters and how many survived, over all groups.
      clusters: clusters holding at least one fact of the type.
      groups: groups (conversations) holding at least one.
    """

    share: float
    lower: float
    upper: float
    facts: int
    kept: int
    clusters: int
    groups: int


def summarise_survival(
    rows: Sequence[ClusterSurvival], *, level: float = 0.95
) -> dict[str, dict[str, TypeSurvival]]:
    """``{operator: {type: TypeSurvival}}`` from per-cluster counts (module docstring)."""
    out: dict[str, dict[str, TypeSurvival]] = {}
    for op in dict.fromkeys(r.operator for r in rows):
        mine = [r for r in rows if r.operator == op]
        groups = sorted({r.group for r in mine})
        out[op] = {}
        for t in FACT_TYPES:
            n = np.zeros(len(groups))
            k = np.zeros(len(groups))
            clusters = 0
            for r in mine:
                f, s = r.counts[t]
                if f:
                    gi = groups.index(r.group)
                    n[gi] += f
                    k[gi] += s
                    clusters += 1
            has = n > 0
            shares = k[has] / n[has]
            if shares.size:
                ci = group_t_interval(shares, level=level)
                est = float(ci.estimate[0])
                # a share lives in [0, 1]: the t interval is clipped to it
                lo, hi = (float(np.clip(v[0], 0.0, 1.0)) for v in (ci.lower, ci.upper))
            else:
                est = lo = hi = float("nan")
            out[op][t] = TypeSurvival(
                est, lo, hi, int(n.sum()), int(k.sum()), clusters, int(has.sum())
            )
    return out


def locomo_survival(
    conversations,
    operators,
    *,
    actions: Sequence[str] = ("merge", "abstract", "rewrite"),
    granularity: str = "session",
    progress: Callable[[str], None] | None = None,
) -> list[ClusterSurvival]:
    """Per question's oracle cluster (deduplicated within a conversation) and operator: the raw
    cluster's facts found in the operator's records (all rendered as the reader sees them).

    Args:
      conversations: ``oas.real.Conversation`` s (``load_locomo(...).conversations``).
      operators: an ``OperatorBackend`` (``make_operators("dataset")``, ``"extractive"``).
      actions: the operators to measure.

    Returns:
      one ``ClusterSurvival`` per (cluster, action); ``group`` is the conversation id.
    """
    from oas.real._instances import cluster_of, render

    out = []
    for conv in conversations:
        if hasattr(operators, "fit"):
            operators.fit(conv)
        clusters: dict[tuple[str, ...], list] = {}
        for q in conv.queries:
            cluster = cluster_of(q, conv, granularity)
            key = tuple(r.record_id for r in cluster)
            clusters.setdefault(key, [cluster, []])[1].append(q.query_id)
        seen = clusters
        for cluster, qids in clusters.values():
            raw = "\n".join(render(r) for r in cluster)
            for a in actions:
                recs = getattr(operators, a)(cluster, conv)
                text = "\n".join(render(r) for r in recs)
                s = cluster_survival(raw, text, group=conv.conversation_id, operator=a)
                out.append(s._replace(queries=tuple(qids)))
        if progress is not None:
            progress(f"conversation {conv.conversation_id}: {len(seen)} clusters")
    return out


def below_bar(
    summary: dict[str, dict[str, TypeSurvival]], types: Sequence[str], minimum: float
) -> list[tuple[str, str, float]]:
    """``(operator, type, share)`` of each required type whose share is below ``minimum``
    (a type with no fact anywhere is not below it)."""
    bad = [t for t in types if t not in FACT_TYPES]
    if bad:
        raise InputError(
            f"--require: unknown fact type {bad[0]!r}; expected among {list(FACT_TYPES)}."
        )
    out = []
    for op, by_type in summary.items():
        for t in types:
            s = by_type[t].share
            if not np.isnan(s) and s < minimum:
                out.append((op, t, s))
    return out


class Fidelity(NamedTuple):
    """``locomo_fidelity``'s result.

    Attributes:
      summary: ``{"BACKEND:ACTION": {type: TypeSurvival}}``.
      clusters: the per-cluster counts behind it.
      data: the file read; conversations: how many.
    """

    summary: dict[str, dict[str, TypeSurvival]]
    clusters: list[ClusterSurvival]
    data: str
    conversations: int


def locomo_fidelity(
    data: str | None = None,
    *,
    backends: Sequence = ("dataset",),
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Fidelity:
    """Fact survival on LoCoMo under each operator of each backend (module docstring).

    Args:
      data: ``locomo10.json`` (default: the data cache, ``retcon data fetch locomo``).
      backends: backend names (``"dataset"``, ``"extractive"``) or ``OperatorBackend`` objects.
      limit: the first ``limit`` conversations only.

    Returns:
      ``Fidelity``; operators are named ``BACKEND:ACTION`` (``dataset:merge``).
    """
    from oas.real._fetch import resolve_data
    from oas.real._locomo import load_locomo
    from oas.real._operators import make_operators

    path = resolve_data("locomo", data)
    convs = list(load_locomo(path).conversations)
    if limit is not None:
        if limit < 1:
            raise InputError(f"--limit must be a positive number of conversations; got {limit}.")
        convs = convs[:limit]
    rows: list[ClusterSurvival] = []
    for b in backends:
        ops = make_operators(b) if isinstance(b, str) else b
        for r in locomo_survival(convs, ops, progress=progress):
            rows.append(r._replace(operator=f"{ops.name}:{r.operator}"))
    return Fidelity(summarise_survival(rows), rows, str(path), len(convs))


class LossRelation(NamedTuple):
    """Does losing a fact of one type predict the replacement loss (MODEL §3)?

    Over the questions of one type whose cluster holds a fact of ``fact_type``, the replacement
    loss of operator ``o`` is the mean of ``y_ret - y_o`` over the rows where the raw cluster fits
    the budget whole (``cluster_tokens <= budget``: retention grounds it, so the difference is the
    replacement term). ``difference`` is, per conversation, the mean loss of the questions whose
    cluster lost at least one such fact minus that of the questions that kept all, then the mean
    over conversations with its Student-t interval (``groups`` conversations hold both kinds).

    Attributes:
      operator, query_type, fact_type: what was related.
      questions: questions counted; lost_share: the share whose cluster lost a fact.
      loss_lost, loss_kept: mean loss of the two kinds of question (pooled).
      difference, lower, upper, groups: the per-conversation difference and its interval.
      spearman: rank correlation of the question's survival share with its loss (rows are not
        independent across a conversation: descriptive only).
    """

    operator: str
    query_type: str
    fact_type: str
    questions: int
    lost_share: float
    loss_lost: float
    loss_kept: float
    difference: float
    lower: float
    upper: float
    groups: int
    spearman: float


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation (ties averaged); NaN with fewer than 3 points."""
    from scipy.stats import rankdata

    if x.size < 3:
        return float("nan")
    rx, ry = rankdata(x), rankdata(y)
    c = np.corrcoef(rx, ry)[0, 1]
    return float(c)


def survival_loss_relation(
    rows: Sequence[ClusterSurvival],
    paired,
    *,
    operator: str,
    query_type: str = "temporal",
    fact_type: str = "dates",
    level: float = 0.95,
) -> LossRelation:
    """``LossRelation`` of ``operator``'s survival of ``fact_type`` with its replacement loss on the
    questions of ``query_type`` of ``paired`` (an ``oas.PairedData`` with ``cluster_tokens``,
    e.g. ``retcon pair locomo --operators dataset``); ``rows`` from ``locomo_survival`` on the
    same dataset, operator names as there (``merge``) or prefixed (``dataset:merge``)."""
    from retcon.vocab import ACTIONS

    action = operator.rsplit(":", maxsplit=1)[-1]
    if action not in ACTIONS[1:]:
        raise InputError(f"operator must name merge, abstract or rewrite; got {operator!r}.")
    if paired.cluster_tokens is None:
        raise InputError("the paired data gives no cluster_tokens; retention's fit is unknown.")
    surv = {}
    for r in rows:
        if r.operator == operator:
            for q in r.queries:
                surv[q] = r.counts[fact_type]
    j = ACTIONS.index(action)
    fits = np.asarray(paired.cluster_tokens) <= np.asarray(paired.budget)
    qid = np.asarray(paired.query_id).astype(str)
    xs, ls, gs = [], [], []
    for q in np.unique(qid[np.asarray(paired.query_type) == query_type]):
        m = (qid == q) & fits
        n, k = surv.get(str(q), (0, 0))
        if not m.any() or n == 0:
            continue
        xs.append(k / n)
        ls.append(float(np.mean(paired.outcomes[m, 0] - paired.outcomes[m, j])))
        gs.append(str(paired.group_id[m][0]))
    x, loss, g = np.array(xs), np.array(ls), np.array(gs)
    if x.size == 0:
        raise InputError(
            f"no {query_type} question of the paired data has a {fact_type} fact in a cluster "
            f"that fits a budget; nothing to relate."
        )
    diffs = []
    for grp in np.unique(g):
        a, b = loss[(g == grp) & (x < 1)], loss[(g == grp) & (x == 1)]
        if a.size and b.size:
            diffs.append(a.mean() - b.mean())
    nan = float("nan")
    if diffs:
        ci = group_t_interval(np.array(diffs), level=level)
        est, lo, hi = float(ci.estimate[0]), float(ci.lower[0]), float(ci.upper[0])
    else:
        est = lo = hi = nan
    lost = x < 1
    return LossRelation(
        operator,
        query_type,
        fact_type,
        int(x.size),
        float(lost.mean()),
        float(loss[lost].mean()) if lost.any() else nan,
        float(loss[~lost].mean()) if (~lost).any() else nan,
        est,
        lo,
        hi,
        len(diffs),
        _spearman(x, loss),
    )
