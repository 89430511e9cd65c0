"""Checking the LLM judge of ``--llm-judge llm``: a false-acceptance probe on decoy answers, and the
agreement of the LLM judge with the lexical judge on the same answers.

A judge that says "yes" to wrong answers turns judge leniency into accuracy, and a paired gain
measured through it can be a gain in leniency. The probe asks the run's judge about answers known
to be wrong, with the same prompt it grades the reader's answers with:

* ``other-gold``: the gold answer of another question of the same conversation and the same type
  (the next such question after it, cyclically, whose answer the lexical rule does not match with
  this question's gold answer);
* ``topical``: a topical but wrong answer written by the run's model (the operator model) from
  the question and its gold answer; one the lexical rule matches with the gold answer is not a
  wrong answer and is left out (counted in ``n_invalid``).

The false-acceptance rate is the share of decoys the judge accepts, with a 95% Wilson score
interval; above ``threshold`` (default 10%) the judge is flagged. Every call goes through the LLM
cache, so a rerun of the probe sends nothing new.

References: MODEL §2 (the reader and its judged outcome), §9 (real paired data); docs/llm.md
"Checking the judge".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from oas.real._lexical import lexical_correct
from oas.real._types import Conversation, Query
from retcon.errors import InputError, check_range

__all__ = [
    "DECOY_KINDS",
    "DEFAULT_JUDGE_THRESHOLD",
    "JudgeAgreement",
    "JudgeProbe",
    "judge_agreement",
    "judge_probe",
    "other_gold_decoys",
    "wilson_interval",
]

#: The decoy kinds of the probe, in report order.
DECOY_KINDS = ("other-gold", "topical")
#: False-acceptance rate above which a judge is flagged (``--judge-threshold``).
DEFAULT_JUDGE_THRESHOLD = 0.10


class JudgeProbe(NamedTuple):
    """The false-acceptance probe of one judge (``judge_probe``).

    ``n_decoys`` wrong answers were judged, ``n_accepted`` of them accepted: ``rate`` with its 95%
    Wilson interval ``[lower, upper]`` (NaN with no decoy); ``by_kind[kind]`` holds the same for
    each decoy kind; ``n_invalid`` topical decoys matched the gold answer lexically and were left
    out; ``n_unparsed`` verdicts said neither yes nor no (counted as a rejection, as the reader
    counts them); ``flagged``: ``rate > threshold``.
    """

    n_decoys: int
    n_accepted: int
    rate: float
    lower: float
    upper: float
    threshold: float
    flagged: bool
    by_kind: dict
    n_invalid: int
    n_unparsed: int
    examples: tuple

    def as_json(self) -> dict:
        """JSON-ready: NaN as ``None``."""
        d = self._asdict()
        for k in ("rate", "lower", "upper"):
            d[k] = _finite_or_none(d[k])
        d["by_kind"] = {
            kind: {k: _finite_or_none(v) if isinstance(v, float) else v for k, v in s.items()}
            for kind, s in self.by_kind.items()
        }
        d["examples"] = [list(e) for e in self.examples]
        return d

    def line(self) -> str:
        """One line for a report: the rate, its interval, the decoys and the verdict."""
        if self.n_decoys == 0:
            return "judge check: no decoy answers could be made (INCONCLUSIVE)"
        kinds = ", ".join(
            f"{k} {s['n_accepted']}/{s['n_decoys']}"
            for k, s in self.by_kind.items()
            if s["n_decoys"]
        )
        verdict = (
            f"FLAGGED: above the {self.threshold:.0%} threshold; accuracies judged by it are "
            "inflated by leniency"
            if self.flagged
            else f"ok: at most the {self.threshold:.0%} threshold"
        )
        return (
            f"judge check: false acceptance {self.rate:.1%} (95% CI {self.lower:.1%}-"
            f"{self.upper:.1%}) of {self.n_decoys} wrong answers ({kinds}); {verdict}"
        )


class JudgeAgreement(NamedTuple):
    """The LLM judge against the lexical judge on the same answers (``judge_agreement``).

    ``table[llm][lexical]`` counts answers by the two verdicts (``"yes"``/``"no"`` each);
    ``agreement`` is the share of answers where they agree, ``kappa`` Cohen's kappa (NaN when
    the chance agreement is 1), ``n`` the answers compared.
    """

    n: int
    table: dict
    agreement: float
    kappa: float

    def as_json(self) -> dict:
        d = self._asdict()
        d["agreement"], d["kappa"] = _finite_or_none(self.agreement), _finite_or_none(self.kappa)
        return d

    def lines(self) -> list[str]:
        """The 2x2 table as text lines."""
        t = self.table
        return [
            f"judge agreement (LLM vs lexical, {self.n} answers): agree {self.agreement:.1%}, "
            f"kappa {self.kappa:.2f}",
            f"{'':14}{'lexical yes':>12}{'lexical no':>12}",
            f"{'LLM yes':14}{t['yes']['yes']:>12d}{t['yes']['no']:>12d}",
            f"{'LLM no':14}{t['no']['yes']:>12d}{t['no']['no']:>12d}",
        ]


def wilson_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k / n``; ``(nan, nan)`` when ``n == 0``.

    Unlike the Wald interval it stays inside [0, 1] and is not empty at ``k = 0`` or ``k = n``.
    """
    if not 0.0 < float(level) < 1.0:
        raise InputError(f"wilson_interval: level must be in (0, 1); got {level}.")
    if not (0 <= k <= n):
        raise InputError(f"wilson_interval: need 0 <= k <= n; got k={k}, n={n}.")
    if n == 0:
        return math.nan, math.nan
    from scipy.special import ndtri

    z = float(ndtri(0.5 + float(level) / 2.0))
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)  # exact ends: no rounding off 0 or 1
    hi = 1.0 if k == n else min(1.0, centre + half)
    return lo, hi


def other_gold_decoys(
    pairs: Sequence[tuple[Conversation, Query]],
) -> list[tuple[Query, str]]:
    """``(query, decoy)`` for every question with an ``other-gold`` decoy, in input order.

    The decoy is the gold answer of the next question after it (cyclically, in input order) of
    the same conversation and the same type that the lexical rule does not match with the
    question's own gold answer. A question without one has no decoy.
    """
    groups: dict[tuple[str, str], list[Query]] = {}
    for conv, q in pairs:
        groups.setdefault((conv.conversation_id, str(q.query_type)), []).append(q)
    out = []
    for conv, q in pairs:
        peers = groups[(conv.conversation_id, str(q.query_type))]
        i = next(j for j, p in enumerate(peers) if p is q)
        for step in range(1, len(peers)):
            other = str(peers[(i + step) % len(peers)].answer).strip()
            if other and not lexical_correct(str(q.answer), other):
                out.append((q, other))
                break
    return out


def judge_probe(
    reader,
    pairs: Sequence[tuple[Conversation, Query]],
    *,
    threshold: float = DEFAULT_JUDGE_THRESHOLD,
    workers: int = 1,
    n_examples: int = 3,
) -> JudgeProbe:
    """Ask ``reader``'s LLM judge about known-wrong answers to the questions of ``pairs``.

    Args:
      reader: an ``LLMReader`` with ``judge="llm"`` (its ``verdict`` and ``wrong_answer``).
      pairs: the run's ``(conversation, query)`` pairs.
      threshold: the false-acceptance rate above which the judge is flagged, in [0, 1].
      workers: questions worked on at once (the reader's endpoint pool bounds the requests).
      n_examples: accepted decoys kept as examples ``(query_id, kind, decoy)``.

    Returns:
      ``JudgeProbe``; the decoys are judged in input order, other-gold first, so the result does
      not depend on ``workers``.

    Raises:
      InputError: ``reader`` is not an LLM judge, or a bad ``threshold``.
    """
    threshold = check_range("judge threshold", threshold, 0.0, 1.0, high_open=False)
    if getattr(reader, "judge", None) != "llm" or not hasattr(reader, "verdict"):
        raise InputError("judge_probe: the reader must be the llm reader with judge='llm'.")
    decoys: list[tuple[str, Query, str]] = [
        ("other-gold", q, d) for q, d in other_gold_decoys(pairs)
    ]
    queries = [q for _, q in pairs]

    def topical(q: Query):
        text = reader.wrong_answer(q)
        return None if not text or lexical_correct(str(q.answer), text) else text

    made = _map(topical, queries, workers)
    n_invalid = sum(1 for t in made if t is None)
    decoys += [("topical", q, t) for q, t in zip(queries, made) if t is not None]
    verdicts = _map(lambda d: reader.verdict(d[1], d[2]), decoys, workers)
    accepted = [v is True for v in verdicts]
    by_kind = {}
    for kind in DECOY_KINDS:
        acc = [a for (k, _, _), a in zip(decoys, accepted) if k == kind]
        by_kind[kind] = _rate(sum(acc), len(acc))
    total = _rate(sum(accepted), len(accepted))
    examples = tuple((q.query_id, kind, text) for (kind, q, text), a in zip(decoys, accepted) if a)[
        :n_examples
    ]
    return JudgeProbe(
        n_decoys=total["n_decoys"],
        n_accepted=total["n_accepted"],
        rate=total["rate"],
        lower=total["lower"],
        upper=total["upper"],
        threshold=float(threshold),
        flagged=bool(total["n_decoys"] and total["rate"] > threshold),
        by_kind=by_kind,
        n_invalid=n_invalid,
        n_unparsed=sum(1 for v in verdicts if v is None),
        examples=examples,
    )


def judge_agreement(llm, lexical) -> JudgeAgreement:
    """The 2x2 table of the LLM judge's verdicts against the lexical judge's on the same answers.

    Args:
      llm, lexical: equal-length sequences of 0/1 verdicts (NaN entries are left out of both).

    Raises:
      InputError: the lengths differ, or a verdict is not 0 or 1.
    """
    a = np.asarray(llm, dtype=np.float64).reshape(-1)
    b = np.asarray(lexical, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise InputError(
            f"judge_agreement: {a.size} LLM verdicts but {b.size} lexical verdicts; expected "
            "one of each per answer."
        )
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if not np.isin(a, (0.0, 1.0)).all() or not np.isin(b, (0.0, 1.0)).all():
        raise InputError("judge_agreement: verdicts must be 0 or 1.")
    n = int(a.size)
    table = {
        "yes": {"yes": int(((a == 1) & (b == 1)).sum()), "no": int(((a == 1) & (b == 0)).sum())},
        "no": {"yes": int(((a == 0) & (b == 1)).sum()), "no": int(((a == 0) & (b == 0)).sum())},
    }
    if n == 0:
        return JudgeAgreement(0, table, math.nan, math.nan)
    agree = float((a == b).mean())
    chance = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    kappa = (agree - chance) / (1.0 - chance) if chance < 1.0 else math.nan
    return JudgeAgreement(n, table, agree, float(kappa))


def _rate(k: int, n: int) -> dict:
    lo, hi = wilson_interval(k, n)
    return {
        "n_decoys": n,
        "n_accepted": k,
        "rate": k / n if n else math.nan,
        "lower": lo,
        "upper": hi,
    }


def _map(fn, items, workers: int) -> list:
    if workers <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="retcon-judge") as ex:
        return list(ex.map(fn, items))


def _finite_or_none(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x
