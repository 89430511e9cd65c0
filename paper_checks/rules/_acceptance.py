"""The acceptance rule, per direction: which of a rule's readings stand at the data's G.

Stated once here (``ACCEPTANCE_RULE``, printed at the top of REPORT.md) and in
docs/statistics.md §6:

* a PASS stands when the rule's false-PASS rate (its level: PASS in the worst null world) is at
  most 5%; low power does not weaken a significant result;
* a FAIL stands when the rule's false-FAIL rate (FAIL when the claim holds with the paper's
  effect) is at most 5%;
* a PARTIAL stands when the rule's false-PARTIAL rate (PARTIAL in the worst null world) is at
  most 5%; otherwise it is not a graded verdict;
* anything else is INCONCLUSIVE, with the rule's power at the paper's effect in words; where
  that power is at least 80%, an effect of the paper's size would very likely have been seen.

Power is always at a stated effect (the paper's, MODEL §11, and half of it), never at the data's
observed effect (Hoenig & Heisey 2001).
"""

from __future__ import annotations

import math
from typing import Any

from paper_checks._types import FAIL, INCONCLUSIVE, NOT_TESTABLE, PARTIAL, PASS, Verdict

#: Largest false-PASS, false-FAIL and false-PARTIAL rate at which that reading stands; the power
#: above which a reading that shows nothing is worded as evidence of absence.
LEVEL = 0.05
HIGH_POWER = 0.80

ACCEPTANCE_RULE = (
    "Acceptance rule, per direction (docs/statistics.md §6; Hoenig & Heisey 2001, The American "
    "Statistician 55(1)): a PASS stands when the rule's false-PASS rate at the data's G is <= 5%; "
    "a FAIL stands when its false-FAIL rate (FAIL when the claim holds with the paper's effect) "
    "is <= 5%; a PARTIAL stands when its false-PARTIAL rate (PARTIAL in the worst null world) is "
    "<= 5%. Any other reading is INCONCLUSIVE, with the rule's power at the paper's effect "
    "stated; where that power is >= 80%, an effect of the paper's size would very likely have "
    "been seen. Power is measured at stated effects (the paper's, MODEL §11, and half of it), "
    "never at the data's observed effect."
)


def power_words(oc: Any) -> str:
    """``at G = 10 this rule detects the paper's effect with probability 0.41; this data does
    not show it`` (plus the evidence-of-absence sentence where the power is >= 80%)."""
    pw = float(oc.power)
    out = (
        f"at G = {oc.n_groups} this rule detects the paper's effect with probability {pw:.2f} "
        f"(half of it: {_p(oc.power_half)}); this data does not show it"
    )
    if pw >= HIGH_POWER:
        out += "; an effect of the paper's size would very likely have been seen"
    return out


def _p(x) -> str:
    return "not measured" if x is None or not math.isfinite(float(x)) else f"{float(x):.2f}"


def stands(reading: str, oc: Any) -> tuple[bool, str]:
    """Whether ``reading`` stands given the rule's measured rates, and the rate it rests on."""
    if reading == PASS:
        r = float(oc.false_pass_rate)
        return r <= LEVEL, f"false PASS {r:.1%}"
    if reading == FAIL:
        r = float(oc.false_fail_rate)
        return r <= LEVEL, f"false FAIL {r:.1%}"
    if reading == PARTIAL:
        r = float(oc.false_partial_rate)
        return (math.isfinite(r) and r <= LEVEL), f"false PARTIAL {_pct(r)}"
    return False, ""


def _pct(r: float) -> str:
    return "not measured" if not math.isfinite(r) else f"{r:.1%}"


def accept(verdict: Verdict, oc: Any) -> Verdict:
    """The verdict after the acceptance rule (module docstring); ``oc`` an
    ``operating.OperatingCharacteristics`` (None: the verdict unchanged)."""
    if oc is None:
        return verdict
    if verdict.verdict in (PASS, FAIL, PARTIAL):
        ok, rate = stands(verdict.verdict, oc)
        if ok:
            return Verdict(verdict.verdict, f"{verdict.reason}; stands on its {rate} ({oc.fmt()})")
        return Verdict(
            INCONCLUSIVE,
            f"the rule reads {verdict.verdict} but its {rate} at G = {oc.n_groups} is above "
            f"{LEVEL:.0%}, so that reading does not stand; {power_words(oc)} (it read: "
            f"{verdict.reason}; {oc.fmt()})",
        )
    if verdict.verdict == INCONCLUSIVE:
        return Verdict(INCONCLUSIVE, f"{verdict.reason}; {power_words(oc)}")
    return verdict


_ANSWER = {
    PASS: "holds",
    FAIL: "does not hold",
    PARTIAL: "holds in part",
    INCONCLUSIVE: "cannot tell from this data",
    NOT_TESTABLE: "not testable",
}


def detects(d: dict) -> str:
    """What the data can detect, in words: "with G = 10 groups this design detects a
    paper-sized effect 59% of the time (half of it: 22%)"; empty when not measured."""
    pw, ph = d.get("power_paper_effect"), d.get("power_half_effect")
    if pw is None or not math.isfinite(_f(pw)):
        return ""
    g = (d.get("operating_characteristics") or {}).get("n_groups")
    who = f"with G = {g} groups this design" if g is not None else "this design"
    half = "" if ph is None or not math.isfinite(_f(ph)) else f" (half of it: {_f(ph):.0%})"
    return f"{who} detects a paper-sized effect {_f(pw):.0%} of the time{half}"


def answer(result: Any) -> str:
    """One plain line for a claim result (a ``ClaimResult``): holds / does not hold / holds in
    part / cannot tell from this data / not testable / not checked, why (the rate a standing
    reading rests on), and on every graded line what the data can detect (the rule's power at
    the paper's effect and half of it, ``detects``)."""
    d = result.details
    v = result.verdict
    fp, ff, fq = d.get("false_pass_rate"), d.get("false_fail_rate"), d.get("false_partial_rate")
    pw, g = d.get("power_paper_effect"), _groups(d)
    power = detects(d)
    high = pw is not None and _f(pw) >= HIGH_POWER
    if v == NOT_TESTABLE:
        return (
            f"- Claim {result.claim_id}: **{_ANSWER[v]}**: these rows cannot test it "
            f"({d.get('reason', '-')})."
        )
    if v == PASS:
        why = f"the direction is established (false PASS {_pct(_f(fp))}{g})"
    elif v == FAIL:
        why = (
            f"the paper's size is excluded here (power {_f(pw):.0%}; false FAIL {_pct(_f(ff))}{g})"
            if high
            else f"the rule FAILs, and it FAILs in {_pct(_f(ff))} of worlds where the claim holds "
            f"({_true_world(d)}){g}"
        )
    elif v == PARTIAL:
        why = f"some units hold and others do not; a false PARTIAL happens in {_pct(_f(fq))}{g}"
    elif v == INCONCLUSIVE:
        if pw is None:
            why = "no unit of the data could decide, and the rule's power was not measured"
        else:
            read = d.get("rule_verdict")
            rate = {PASS: fp, FAIL: ff, PARTIAL: fq}.get(read)
            why = (
                f"the rule reads {read}, which does not stand (its false {read} rate is "
                f"{_pct(_f(rate))}, above {LEVEL:.0%}); "
                if read
                else ""
            )
            why += "this data does not show the paper's effect"
            if high:
                why += ", and an effect of the paper's size would very likely have been seen"
    else:
        return f"- Claim {result.claim_id}: not checked ({d.get('reason', 'no real data')})."
    tail = f"; {power}" if power else ""  # a graded verdict: the others returned above
    same = d.get("same_records")
    tail += f"; {same}" if same else ""
    return f"- Claim {result.claim_id}: **{_ANSWER[v]}**: {why}{tail}."


def _true_world(d: dict) -> str:
    return (d.get("operating_characteristics") or {}).get("true_world") or "the paper's effect"


def _f(x) -> float:
    return float("nan") if x is None else float(x)


def _groups(d: dict) -> str:
    g = (d.get("operating_characteristics") or {}).get("n_groups")
    return "" if g is None else f" (G = {g})"
