"""Tables 2, 8 and 11 of the paper beside ours: the routing policies, from one set of choices.

* **Table 8** (routing baselines): each policy's accuracy and harmful choices per budget, scored
  by grouped five-fold cross-fitting (``paper_checks.tables._crossfit``), with both intervals of
  the accuracy; on rows with ``meta_split`` (a LongMemEval file of the paper's design) by the
  paper's split instead (``paper_checks.tables._crossfit.split_protocol``).
* **Table 2** (direct and calibrated OAS) and **Table 11** (MLP - ridge accuracy, the paper's MLP
  control of MODEL §8 against direct OAS): from Table 8's cross-fitted choices, per budget, with
  both intervals.

``paper_checks.tables._design.paper_tables`` calls them with the choices made once.

References: MODEL §8 (policies, MLP control), §11 (Tables 2, 8, 11).
"""

from __future__ import annotations

import jax
import numpy as np

from paper_checks._published import (
    TABLE_2,
    TABLE_8,
    TABLE_8_ROWS,
    TABLE_11,
    TABLE_11_RIDGE,
    TABLE_11_ROW,
)
from paper_checks.tables._tables_3_4 import _finite, mean_cell

#: Our policy name for each row of the paper's Table 8.
TABLE_8_POLICIES = dict(
    zip(
        TABLE_8_ROWS,
        ("always-ret", "fixed-operator", "evidence-fit", "knn", "oas", "oas-calibrated@0"),
        strict=True,
    )
)


def table_8(key: jax.Array, paired, *, n_resamples: int = 10_000, ev=None) -> list[dict]:
    """Table 8's rows on ``paired``: accuracy (harmful choices) per policy and budget, cross-fitted.

    Args:
      key: JAX key; cross-fitting uses ``fold_in(key, 0)``, the bootstrap of row ``i`` at budget
        ``j`` ``fold_in(key, 1 + 16 * i + j)``.
      paired: ``oas.PairedData``.
      n_resamples: question-bootstrap replicates.
      ev: the cross-fitted choices (``crossfit_evaluate(fold_in(key, 0), paired)``) when the
        caller has them already; ``None`` computes them.

    Returns:
      one dict per (row, budget): ``row``, ``policy``, ``budget``, ``n``, ``accuracy``, ``harms``,
      ``question_interval``, ``conversation_interval``, ``paper`` (``{accuracy, harms}`` or None
      where the paper's table has no such budget), ``difference`` (accuracy, ours - paper), and
      ``paper_in_question_interval`` / ``paper_in_conversation_interval``.

    References: MODEL §8 (routing baselines), §11 (Table 8, router evaluation).
    """
    from paper_checks.tables._crossfit import crossfit_evaluate

    if ev is None:
        ev = crossfit_evaluate(jax.random.fold_in(key, 0), paired)
    groups = np.asarray(paired.group_id).astype(str)[np.asarray(ev.index)]
    budgets = np.unique(ev.budget)
    out = []
    for i, (row, policy) in enumerate(TABLE_8_POLICIES.items()):
        y = ev.outcome(policy)
        harm = ev.harm(policy)
        for j, b in enumerate(budgets):
            rows = ev.budget == b
            pub = TABLE_8.get((row, int(b)))
            k = jax.random.fold_in(key, 1 + 16 * i + j)
            c = mean_cell(
                k, y[rows], groups[rows], None if pub is None else pub.accuracy, n_resamples
            )
            out.append(
                {"row": row, "policy": policy, "budget": int(b), "n": c.pop("n")}
                | {"accuracy": c.pop("ours"), "harms": int(harm[rows].sum())}
                | c
                | {"paper": None if pub is None else pub._asdict()}
            )
    return out


#: Table 2's rows and our policy for each.
TABLE_2_POLICIES = {"direct": "oas", "calibrated": "oas-calibrated@0"}


def table_2(key: jax.Array, paired, ev, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 2: direct and calibrated OAS, gain over retention and harmful choices per budget.

    Args:
      key: JAX key; cell ``k`` (in the returned order) uses ``fold_in(key, k)``.
      paired: ``oas.PairedData`` (for the conversations of the rows).
      ev: the cross-fitted choices of Table 8 (``paper_checks.tables._crossfit.crossfit_evaluate``).
      n_resamples: question-bootstrap replicates.

    Returns:
      one dict per (row, budget), rows ``direct`` then ``calibrated``: ``row``, ``policy``,
      ``budget``, ``harms`` (ours), ``paper_harms``, ``paper_interval`` and the ``mean_cell``
      fields of the gain ``y(chosen) - y(ret)`` (``paper_checks.tables._tables_1_7_9_10``).

    References: MODEL §8 (calibration), §11 (Table 2).
    """
    groups = np.asarray(paired.group_id).astype(str)[ev.index]
    out = []
    for row, policy in TABLE_2_POLICIES.items():
        gain = ev.outcome(policy) - ev.outcomes[:, 0]
        harm = ev.harm(policy)
        for b in np.unique(ev.budget):
            rows = ev.budget == b
            pub = TABLE_2.get((row, int(b)))
            k = jax.random.fold_in(key, len(out))
            cell = mean_cell(
                k, gain[rows], groups[rows], None if pub is None else pub.value, n_resamples
            )
            out.append(
                {"row": row, "policy": policy, "budget": int(b), "harms": int(harm[rows].sum())}
                | cell
                | {
                    "paper_harms": None if pub is None else pub.harmed,
                    "paper_interval": None if pub is None else [pub.lo, pub.hi],
                }
            )
    return out


def table_11(key: jax.Array, paired, ev, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 11: the MLP control minus direct OAS (ridge), accuracy per budget, paired by question.

    Args:
      key: JAX key; the cell of budget ``j`` (ascending) uses ``fold_in(key, j)``.
      paired: ``oas.PairedData`` (for the conversations of the rows).
      ev: the cross-fitted choices of Table 8 (``paper_checks.tables._crossfit.crossfit_evaluate``), with
        its ``mlp`` policy (``oas.fit_mlp``: the paper's grid, chosen by inner grouped CV).
      n_resamples: question-bootstrap replicates.

    Returns:
      one dict per budget: ``row`` (``"mlp - ridge"``), ``budget``, ``ridge_accuracy`` (ours),
      ``paper_ridge_accuracy``, ``paper_interval`` and the ``mean_cell`` fields of the paired
      difference ``y(mlp's choice) - y(ridge's choice)``; the paper's values are ``None`` at a
      budget its table lacks.

    References: MODEL §8 (the MLP control), §11 (Table 11).
    """
    groups = np.asarray(paired.group_id).astype(str)[ev.index]
    ridge = ev.outcome("oas")
    diff = ev.outcome("mlp") - ridge
    out = []
    for j, b in enumerate(np.unique(ev.budget)):
        rows = ev.budget == b
        pub = TABLE_11.get((TABLE_11_ROW, int(b)))
        cell = mean_cell(
            jax.random.fold_in(key, j),
            diff[rows],
            groups[rows],
            None if pub is None else pub.value,
            n_resamples,
        )
        out.append(
            {
                "row": TABLE_11_ROW,
                "budget": int(b),
                "ridge_accuracy": _finite(ridge[rows].mean()),
                "paper_ridge_accuracy": TABLE_11_RIDGE.get(int(b)),
            }
            | cell
            | {"paper_interval": None if pub is None else [pub.lo, pub.hi]}
        )
    return out
