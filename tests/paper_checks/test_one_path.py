"""One path per rule (issue 46 item 2): for every claim, the function that grades the data is the
function whose false PASS, false FAIL and power are simulated. Each claim records the rule and the
per-group arrays it graded (``claims._base.graded``); here the rule is run again on the same
arrays and must give the claim's reading, and the claim's ``*_oc`` must call that very function
(MODEL §6-8: the rules; docs/statistics.md §6)."""

from __future__ import annotations

import pytest

import paper_checks as pc
from paper_checks.rules import _cross_note, _reversal, _router, _slope
from tests.paper_checks.test_paper_checks_claims import HOLDS, make_workspace, reads

#: claim -> (its rule's home, the rule's name there)
HOMES = {
    "1": (_reversal, "reversal_verdict"),
    "2": (_reversal, "tight_gain_verdict"),
    "3": (_reversal, "loose_verdict"),
    "4": (_reversal, "reversal_verdict"),
    "5": (_slope, "slope_verdict"),
    "6": (_cross_note, "cross_note_verdict"),
    "7": (_router, "router_gain_verdict"),
    "8": (_router, "equivalence_verdict"),
    "9": (_router, "harm_verdict"),
}


def _verdict(out):
    """A rule's reading (claim 5's rule returns ``(verdict, slopes, estimates)``)."""
    return out.verdict if hasattr(out, "verdict") else out[0].verdict


@pytest.fixture(scope="module")
def holds():
    return make_workspace(HOLDS)


@pytest.mark.parametrize("cid", sorted(HOMES))
def test_the_graded_verdict_is_the_rule_on_the_same_arrays(cid, holds):
    module, name = HOMES[cid]
    r = pc.CHECKS[cid](holds)
    rule, args, kwargs = holds.graded[cid]
    assert rule is getattr(module, name)
    assert _verdict(rule(*args, **kwargs)) == reads(r), r.details["reason"]


@pytest.mark.parametrize("cid", sorted(HOMES))
def test_the_simulated_rule_is_the_grading_rule(cid, monkeypatch):
    """The claim's operating characteristics call its rule's home function (patched here to
    count), so the rates printed beside a verdict are the grading function's."""
    module, name = HOMES[cid]
    calls = []
    real = getattr(module, name)

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(module, name, counted)
    r = pc.CHECKS[cid](make_workspace(HOLDS))
    assert r.details.get("operating_characteristics"), r.details["reason"]
    assert len(calls) > 10  # every simulated data set of every world
