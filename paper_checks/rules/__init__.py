"""The verdict rules: each claim's rule on per-group arrays, its operating characteristic, and the acceptance rule.

The second layer of ``paper_checks`` (above the foundations: types, config, curves, effects, the
published tables, the operating-characteristics engine ``paper_checks.operating`` and the LoCoMo
evaluation ``paper_checks._loco``; below ``tables``, ``claims``, ``report``, ``studies`` and the
runner). A rule maps the measured per-group numbers to PASS / PARTIAL / FAIL / INCONCLUSIVE
(``_verdicts``, ``_rules`` with each rule's simulated false-PASS, power and false-FAIL rates,
``_slope`` for claim 5's slope test, ``_crossover_coverage`` for what a crossover interval
covers), ``_acceptance`` says which reading stands on its own rates, ``_requirements`` what each
claim needs of the rows, and ``_oc`` is the report's hook to the rates. Modules here import only
the foundations and each other, never a claim, a table, the report or a study.
"""
