"""Studies beyond the paper's claims: what this package measures that the paper does not claim.

The sixth layer of ``paper_checks`` (above the report, whose sections they append to; below the
runner, which calls them when asked). None of these decides a claim's verdict. ``_magnitude``
(how large each effect is, beside the claims), ``_end_to_end`` and ``_router_oc`` (LoCoMo end to
end with a retriever and the router rule's rates), ``_robustness`` (the verdicts under LoCoMo's
audited annotations), ``_timeline``, ``_timeline_rules`` and ``_timeline_oc`` (memory over time,
MODEL §10: its rules and their rates), and ``scripts`` (the analyses and figures behind the
scripts of ``experiments/``). Experimental in the sense of numpyro's ``contrib``: their outputs
may change between releases without a deprecation.
"""
