"""Claim 6, cross-note operators against local rewrite: the rule on per-group arrays
(``cross_note_verdict``) and the simulation of that same rule's error rates (``cross_note_oc``);
one home per rule (``paper_checks.rules._grades``).

References: MODEL §7.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from paper_checks._curves import t_estimate
from paper_checks._effects import CROSS_NOTE_BEATS, CROSS_NOTE_CONDITION, cross_note_effects
from paper_checks._types import Estimate, Verdict
from paper_checks.operating import N_DATASETS
from paper_checks.rules._grades import NO, POINT, SIGNIFICANT, combine, grade_positive, halved_oc


def verdict_cross_note(
    beats_rewrite: Mapping[str, Estimate],
    merge_minus_abstract: Mapping[str, Estimate],
    *,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claim 6: merge and abstract beat rewrite under tight budgets, and neither dominates.

    Args:
      beats_rewrite: ``{unit: Estimate of U(o) - U(rewrite)}`` pooled over the real rows where
        compression is necessary, one unit per source and operator (an operator that is the same
        text as rewrite is passed in ``inconclusive`` instead).
      merge_minus_abstract: ``{condition: Estimate of U(merge) - U(abstract)}`` over conditions
        (source x query type), with family-wise intervals (the caller's Bonferroni level). Neither dominates (grade 2) when some condition favours merge and
        another abstract, both significantly; 1 when only the points disagree in sign; 0 when one
        operator is ahead in every condition.
    """
    grades = {f"beats-rewrite:{u}": grade_positive(e) for u, e in beats_rewrite.items()}
    vals = [e for e in merge_minus_abstract.values() if e.defined]
    if vals:
        merge_sig = any(e.lower > 0 for e in vals)
        abstract_sig = any(e.upper < 0 for e in vals)
        merge_pt = any(e.point > 0 for e in vals)
        abstract_pt = any(e.point < 0 for e in vals)
        grades["neither-dominates"] = (
            SIGNIFICANT if merge_sig and abstract_sig else POINT if merge_pt and abstract_pt else NO
        )
    return combine(grades, missing, inconclusive)


def cross_note_verdict(
    beats: Mapping, conds: Mapping, *, missing: Sequence[str] = (), inconclusive=None
) -> Verdict:
    """Claim 6 on per-group arrays: ``beats`` ``{unit: (G,)}`` per-group ``U(o) - U(rewrite)``
    where compression is necessary, ``conds`` ``{condition: (G,)}`` per-group
    ``U(merge) - U(abstract)``; their t-intervals (Bonferroni over the conditions,
    ``conditions``) graded by ``verdict_cross_note``."""
    return verdict_cross_note(
        {k: t_estimate(v) for k, v in beats.items()},
        conditions(dict(conds)),
        missing=missing,
        inconclusive=inconclusive,
    )


def conditions(conds: dict) -> dict:
    """``{condition: Estimate}`` of per-group ``U(merge) - U(abstract)`` with Bonferroni t-intervals
    (level ``1 - 0.05 / n_conditions``): "some condition favours merge" and "some favours
    abstract" each hold a family-wise 2.5% over the conditions."""
    level = 1 - 0.05 / max(len(conds), 1)
    return {k: t_estimate(v, level) for k, v in conds.items()}


def cross_note_oc(key, beats: dict, conds: dict, *, n_datasets: int = N_DATASETS):
    """Claim 6's rule (``verdict_cross_note`` of t-intervals) in a true world at the paper's stated
    effects (``_effects.cross_note_effects``: Table 4's ``o - rewrite`` per operator, Table 7's
    per-type ``merge - abstract`` size with the signs taking turns), and null worlds where one
    operator ties rewrite or every condition favours merge (one dominates), with the data's
    spread."""
    data = {f"b:{k}": v for k, v in beats.items()} | {f"c:{k}": v for k, v in conds.items()}
    true = cross_note_effects(beats, conds)
    ck = [k for k in data if k.startswith("c:")]
    nulls = {}
    bk = [k for k in data if k.startswith("b:")]
    if bk:
        nulls["an operator ties rewrite"] = {**true, bk[0]: 0.0}
    if ck:
        nulls["merge never behind"] = {**true, **{k: max(true[k], 0.0) for k in ck}}

    def rule(d):
        return cross_note_verdict(
            {k[2:]: v for k, v in d.items() if k.startswith("b:")},
            {k[2:]: v for k, v in d.items() if k.startswith("c:")},
        ).verdict

    return halved_oc(
        rule,
        data,
        true,
        nulls,
        key,
        n_datasets,
        (
            f"the paper's effects: o - rewrite {CROSS_NOTE_BEATS['abstract']:+.3f} (abstract), "
            f"{CROSS_NOTE_BEATS['merge']:+.3f} (merge) from Table 4; merge - abstract "
            f"+-{CROSS_NOTE_CONDITION:.3f} per query type from Table 7; the data's spread",
            "those effects halved",
        ),
    )
