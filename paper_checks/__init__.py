"""Paper checks: the paper's claims, one function each, measured with CIs and given a computed verdict.

``run_checks`` measures every claim (theory, sim, OAS, LoCoMo) and ``write_run`` writes
``REPORT.md``, ``report.json`` and the figures; ``retcon paper-checks`` does both. Each claim's
verdict comes from a pure verdict function of the measured real-data numbers (simulation shows
the mechanism, real data decides). Each rule's error rates at the data's group count (false PASS,
power, false FAIL) come from the public module ``paper_checks.operating``.

Public: the nine claims (``check_*``, ``CHECKS``, ``CLAIMS``), ``run_checks``
and ``write_run``, ``append_sections`` (the optional sections ``retcon paper-checks`` appends),
``report_json`` and ``format_claims`` (its JSON and its lines of text), ``claim_ids`` (the
claim ids a run checks), ``stage_timings`` (a run's wall seconds per stage, never in
report.json), the two LoCoMo designs side by side (``design_workspaces``,
``designs_side_by_side``, ``write_designs``, ``designs_text``, ``crossover_lines``), the config (``CheckConfig``,
``TheoryModel``, ``Workspace``, ``locomo_path``, ``llm_configured``), the result types
(``ClaimResult``, ``Verdict``, ``Estimate``, ``SourceCurves``, ``VERDICTS``), the errors
(``DataMissing``, ``DependencyMissing``) and ``run_experiment``, the body of every script in
``experiments/``.

Layers, bottom to top, each importing only downward (tests/test_layers.py): the loose modules
here (types, config, curves, effects, the published tables, the operating-characteristics engine
``operating``, paired files, the LoCoMo evaluation), ``rules`` (each claim's rule and the
acceptance rule), ``tables`` (the paper's tables beside ours), ``claims`` (the nine claims and
their sources), ``report`` (markdown, JSON, HTML, figures), ``studies`` (beyond the paper's claims)
and the runner ``_run``.

References: MODEL §3-9; docs/paper-checks.md; docs/architecture.md.
"""

from retcon.lazy import attach_stub

# Every public name is declared once, in __init__.pyi, and loads on first use.
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
