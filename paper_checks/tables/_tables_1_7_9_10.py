"""Tables 1, 7, 9 and 10 of the paper beside ours, from paired rows of the paper's design.

Each function takes paired data (``oas.PairedData``, one row per question and budget, made under
``--design paper``) and returns one dict per cell: the paper's value (``paper_checks._published``,
never computed; ``None`` where the paper's table has no such cell), ours, our interval in both
units (the paper's question-level percentile bootstrap and our conversation-level Student-t
interval, as in ``paper_checks.tables._tables_3_4``), the difference ours minus the paper's, and whether the
paper's value lies in each interval.

* **Table 1**, fit-stratified gain: the gain over retention of each operator, split by whether
  retention packs all of the question's evidence (feature 3, ``f_B = 1``: "complete") or not
  ("incomplete"), with the help and harm rates; the coverage/replacement check of MODEL §4.
* **Table 7**, gain by query type at 256 tokens (LongMemEval's four types, and all).
* **Table 9**, budget pressure: the mean of ``f_B`` and the shares of questions with full fit
  (``f_B = 1``) and zero fit (``f_B = 0``).
* **Table 10**, operator against operator: ``acc(o1) - acc(o2)`` per budget.

The paper measured Tables 1, 7, 9 and 10 on LongMemEval. On a LoCoMo run its values are shown at
the budgets both grids share as a reference, not as the same experiment (``paper_tables`` says so
in each table's note). ``f_B`` is the row's ``budget_fit_fraction`` feature: the paper's
definition (MODEL §8) under ``--design paper`` and by default.

References: MODEL §4 (coverage / replacement), §8 (feature 3), §11 (Tables 1, 7, 9, 10; inference).
"""

from __future__ import annotations

import jax
import numpy as np

from paper_checks._published import (
    OPERATORS,
    TABLE_1,
    TABLE_1_BUDGETS,
    TABLE_1_N,
    TABLE_1_RATES,
    TABLE_7,
    TABLE_7_BUDGET,
    TABLE_7_N,
    TABLE_9,
    TABLE_10,
    TABLE_10_ROWS,
)
from paper_checks.tables._tables_3_4 import _finite, mean_cell
from retcon.vocab import ACTIONS

#: Table 7's rows: LongMemEval's four types in the paper's order, then all questions.
TABLE_7_TYPES = ("single-session", "multi-session", "temporal-reasoning", "knowledge-update")


def _fit(paired) -> np.ndarray:
    from oas import FEATURE_NAMES

    return np.asarray(paired.features, np.float64)[:, FEATURE_NAMES.index("budget_fit_fraction")]


def _gain(paired, op: str) -> np.ndarray:
    y = np.asarray(paired.outcomes, np.float64)
    return y[:, ACTIONS.index(op)] - y[:, ACTIONS.index("ret")]


def table_1(key: jax.Array, paired, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 1, fit-stratified: each operator's gain at 128 and 256 by whether ``f_B = 1``.

    Args:
      key: JAX key; cell ``k`` (in the returned order) uses ``fold_in(key, k)``.
      paired: ``oas.PairedData``; budgets other than 128 and 256 are ignored, and a budget the
        data lack gives cells with ``n = 0``.
      n_resamples: question-bootstrap replicates.

    Returns:
      one dict per (stratum, operator, budget), strata ``"incomplete"`` then ``"complete"``: the
      ``mean_cell`` fields plus ``stratum``, ``operator``, ``budget``, ``help_rate`` and
      ``harm_rate`` (ours), ``paper_n`` and ``paper_rates`` (the paper's help / harm rates, where
      given).

    References: MODEL §4, §11 (Table 1).
    """
    budget = np.asarray(paired.budget, np.float64)
    full = _fit(paired) >= 1.0
    groups = np.asarray(paired.group_id).astype(str)
    out = []
    for b in TABLE_1_BUDGETS:
        for stratum in ("incomplete", "complete"):
            rows = (budget == b) & (full if stratum == "complete" else ~full)
            for op in OPERATORS:
                d = _gain(paired, op)[rows]
                k = jax.random.fold_in(key, len(out))
                cell = mean_cell(k, d, groups[rows], TABLE_1[(stratum, op, b)], n_resamples)
                rates = TABLE_1_RATES.get((stratum, op, b))
                out.append(
                    {
                        "stratum": stratum,
                        "operator": op,
                        "budget": b,
                        **cell,
                        "help_rate": _finite((d > 0).mean()) if len(d) else None,
                        "harm_rate": _finite((d < 0).mean()) if len(d) else None,
                        "paper_n": TABLE_1_N[(stratum, b)],
                        "paper_rates": None if rates is None else list(rates),
                    }
                )
    return out


def table_7(key: jax.Array, paired, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 7: each operator's gain at 256 tokens by LongMemEval query type, then over all.

    Args:
      key: JAX key; cell ``k`` uses ``fold_in(key, k)``.
      paired: ``oas.PairedData`` with LongMemEval's types (rows at other budgets are ignored).
      n_resamples: question-bootstrap replicates.

    Returns:
      one dict per (type, operator): ``type``, ``operator``, ``budget``, ``paper_n`` and the
      ``mean_cell`` fields.

    References: MODEL §11 (Table 7).
    """
    budget = np.asarray(paired.budget, np.float64)
    qtype = np.asarray(paired.query_type).astype(str)
    groups = np.asarray(paired.group_id).astype(str)
    out = []
    for t in (*TABLE_7_TYPES, "all"):
        rows = (budget == TABLE_7_BUDGET) & ((qtype == t) if t != "all" else True)
        for op in OPERATORS:
            k = jax.random.fold_in(key, len(out))
            d = _gain(paired, op)[rows]
            cell = mean_cell(k, d, groups[rows], TABLE_7[(t, op)], n_resamples)
            out.append(
                {"type": t, "operator": op, "budget": TABLE_7_BUDGET, "paper_n": TABLE_7_N[t]}
                | cell
            )
    return out


def table_9(key: jax.Array, paired, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 9, budget pressure: mean ``f_B``, full-fit and zero-fit shares at each budget.

    Args:
      key: JAX key; cell ``k`` uses ``fold_in(key, k)``.
      paired: ``oas.PairedData``; every budget of the data gets its rows (the paper's value is
        ``None`` at a budget its table lacks).
      n_resamples: question-bootstrap replicates.

    Returns:
      one dict per (quantity, budget), quantities ``"mean fit"``, ``"full fit"`` and
      ``"zero fit"`` (shares as fractions, the paper's percentages divided by 100): ``row``,
      ``budget`` and the ``mean_cell`` fields.

    References: MODEL §8 (feature 3), §11 (Table 9).
    """
    budget = np.asarray(paired.budget, np.float64)
    fit = _fit(paired)
    groups = np.asarray(paired.group_id).astype(str)
    values = {"mean fit": fit, "full fit": fit >= 1.0, "zero fit": fit <= 0.0}
    out = []
    for row, v in values.items():
        for b in np.unique(budget):
            rows = budget == b
            k = jax.random.fold_in(key, len(out))
            paper = TABLE_9.get((row, int(b)))
            cell = mean_cell(k, np.asarray(v, np.float64)[rows], groups[rows], paper, n_resamples)
            out.append({"row": row, "budget": int(b)} | cell)
    return out


def table_10(key: jax.Array, paired, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 10, operator against operator: ``acc(o1) - acc(o2)`` per budget, paired by question.

    Args:
      key: JAX key; cell ``k`` uses ``fold_in(key, k)``.
      paired: ``oas.PairedData``; every budget of the data gets its rows.
      n_resamples: question-bootstrap replicates.

    Returns:
      one dict per (pair, budget), pairs ``merge - abstract``, ``abstract - rewrite``,
      ``merge - rewrite``: ``row``, ``budget``, the ``mean_cell`` fields and ``paper_interval``
      (the paper's interval where it prints one, else ``None``).

    References: MODEL §11 (Table 10).
    """
    budget = np.asarray(paired.budget, np.float64)
    y = np.asarray(paired.outcomes, np.float64)
    groups = np.asarray(paired.group_id).astype(str)
    out = []
    for first, second in TABLE_10_ROWS:
        row = f"{first} - {second}"
        d = y[:, ACTIONS.index(first)] - y[:, ACTIONS.index(second)]
        for b in np.unique(budget):
            rows = budget == b
            pub = TABLE_10.get((row, int(b)))
            k = jax.random.fold_in(key, len(out))
            cell = mean_cell(
                k, d[rows], groups[rows], None if pub is None else pub.value, n_resamples
            )
            iv = None if pub is None or pub.lo is None else [pub.lo, pub.hi]
            out.append({"row": row, "budget": int(b)} | cell | {"paper_interval": iv})
    return out
