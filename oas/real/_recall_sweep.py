"""OAS gain over best-fixed against retriever recall and type-classifier accuracy (simulation).

Both knobs are scenario parameters of ``sim`` (docs/simulation.md): ``retriever.recall`` (each
evidence record is found with this probability; a missed record is absent from every action's
context and from the router's features) and ``classifier.accuracy`` (the router reads a type
predicted with uniform confusion). Every cell of the grid is ``dataclasses.replace`` of the
scenario, simulated with the same key, so the cells share their queries, their outcome draws, and
nested misses and type errors (common random numbers). Each cell's paired data
(``oas.simulate_paired``) are scored by leave-one-group-out (``loco_policies``: ridge router and
best-fixed fitted on the other groups, gains with grouped bootstrap CIs).

References: MODEL §8; docs/simulation.md; docs/end-to-end.md.
"""

from __future__ import annotations

import dataclasses


def intact_share(scenario) -> float:
    """Expected share of queries whose whole evidence is retrieved: ``sum_t w_t recall**|C_t|``
    (each record is found independently; a query with a miss scores ``g`` under every action)."""
    w = sum(t.weight for t in scenario.types)
    r = scenario.retriever.recall
    return float(sum(t.weight / w * r**t.records for t in scenario.types))


def recall_accuracy_sweep(
    key,
    scenario,
    *,
    recalls,
    accuracies,
    n_instances: int = 8000,
    budgets=None,
    n_groups: int = 10,
    n_resamples: int = 500,
) -> dict:
    """OAS, OAS-calibrated and oracle gain over best-fixed on a (recall, accuracy) grid.

    Args:
      key: JAX key; one draw key shared by every cell (common random numbers) and one for scoring.
      scenario: a ``sim.Scenario``; each cell replaces ``retriever.recall`` and ``classifier``.
      recalls, accuracies: the grid; an accuracy of ``None`` keeps ``scenario.classifier``.
      n_instances: paired rows per cell; budgets: the budget grid (default the scenario's).
      n_groups: questions are dealt into this many groups (query ``i`` in group ``i % n_groups``)
        for leave-one-group-out and the grouped bootstrap.
      n_resamples: unused: the intervals are t intervals over groups (kept for the experiment's
        ``--resamples``, which its sidecar records).

    Returns:
      ``{"recalls", "accuracies", "cells": [[{...}] per accuracy] per recall}``, each cell with
      ``gain[policy] = {"point", "lower", "upper"}`` (overall), ``accuracy[policy]`` (overall
      point), ``intact_share`` (expected share of queries whose evidence is wholly retrieved) and
      ``type_accuracy`` (share of rows whose predicted type is the gold one).

    References: MODEL §8 (policies, grouped CIs); docs/simulation.md (the two knobs).
    """

    import jax
    import numpy as np

    from oas import simulate_paired
    from oas.real._endtoend import loco_policies
    from sim import ClassifierConfig

    k_draw, k_score = jax.random.split(key)
    cells = []
    for i, r in enumerate(recalls):
        row = []
        for j, a in enumerate(accuracies):
            sc = dataclasses.replace(
                scenario,
                retriever=dataclasses.replace(scenario.retriever, recall=float(r)),
                classifier=scenario.classifier
                if a is None
                else ClassifierConfig(accuracy=float(a)),
            )
            data = simulate_paired(k_draw, sc, n_instances, budgets=budgets)
            _, q = np.unique(np.asarray(data.query_id).astype(str), return_inverse=True)
            data = data._replace(group_id=np.asarray([f"g{v % n_groups}" for v in q], dtype=object))
            pol = loco_policies(jax.random.fold_in(k_score, i * len(accuracies) + j), data)
            gold = np.asarray(data.meta["meta_gold_type"]).astype(str)
            row.append(
                {
                    "recall": float(r),
                    "accuracy_setting": None if a is None else float(a),
                    "gain": {
                        k: {s: v[s][-1] for s in ("point", "lower", "upper")}
                        for k, v in pol["gain"].items()
                    },
                    "accuracy": {k: v["point"][-1] for k, v in pol["accuracy"].items()},
                    "type_accuracy": float(
                        np.mean(gold == np.asarray(data.query_type).astype(str))
                    ),
                    "intact_share": intact_share(sc),
                }
            )
        cells.append(row)
    return {
        "recalls": list(map(float, recalls)),
        "accuracies": [None if a is None else float(a) for a in accuracies],
        "cells": cells,
    }
