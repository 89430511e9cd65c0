"""The verdict rules: each claim's rule on per-group arrays, its operating characteristic, and the acceptance rule.

The second layer of ``paper_checks`` (above the foundations: types, config, curves, effects, the
published tables, the operating-characteristics engine ``paper_checks.operating`` and the LoCoMo
evaluation ``paper_checks._loco``; below ``tables``, ``claims``, ``report``, ``studies`` and the
runner). One home per rule: each claim's rule on per-group arrays beside the ``*_oc`` that
simulates that same function's false PASS, false FAIL and power (``_reversal`` claims 1-4,
``_slope`` claim 5, ``_cross_note`` claim 6, ``_router`` claims 7-9; ``_grades`` the grades,
their combination and the rules' text). ``_gates`` says first whether the rows can test a claim
at all (NOT TESTABLE), ``_acceptance`` which reading stands on its own rates,
``_requirements`` what each claim needs of the rows, ``_crossover_coverage`` what a crossover
interval covers, and ``_oc`` is the report's hook to the rates. Modules here import only
the foundations and each other, never a claim, a table, the report or a study.
"""
