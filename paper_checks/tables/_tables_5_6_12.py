"""Tables 5, 6 and 12 of the paper beside ours: a second reader's rows, and the full-history design.

The rows come from ``--design paper --protocol end-to-end`` (``oas.real._full_history``: BM25 top
20 turns of the whole memory, capped at 2,048 tokens, retention packed in rank order); each row
carries ``meta_candidates = "full-history"`` so a table is never made from other rows
(``is_full_history``).

* **Table 6**, the full-history stress test: per budget, retention's and abstract's accuracy,
  abstract's gain over retention with its helped / harmed counts, and the binary oracle (per
  question the better of retention and abstract; our reading of "binary oracle").
* **Table 5**, the second answer model: Table 6's computation (``retention_abstract_cells``)
  without the binary oracle, on the rows of a second reader (``--second-reader FILE``, any design;
  ``paper_checks.tables._design.second_reader_table``), beside the paper's GLM-5.2 values.
* **Table 12**, the four-action test: per budget and as the macro average over budgets, the
  accuracy and harmful choices of retention, the three fixed operators, the per-budget policy
  selected on fit data, direct ridge, the frozen safe router (calibrated at zero observed harm)
  and the action oracle, cross-fitted as Table 8 (``paper_checks.tables._crossfit``: the same folds).

Each cell is ``paper_checks.tables._tables_3_4.mean_cell``: ours, the question-bootstrap and
conversation-level intervals, the paper's value (``paper_checks._published``), the difference and
the in-interval flags. Ours are the offline operators and reader, not the paper's DeepSeek-V3.2.

Where this is our reading: "per-budget policy selected on fit data" is, in each rotation, the
action of highest mean outcome at that budget on the fit and calibration folds together (ties to
the earlier of ret, merge, abstract, rewrite), the data the other baselines are fitted on; the macro
average's interval is that of the per-question mean over budgets (equal to the mean of the
per-budget accuracies when every question has every budget).

References: MODEL §8 (policies, calibration), §11 (Table 5; full-history stress test, Tables 6
and 12).
"""

from __future__ import annotations

import jax
import numpy as np

from paper_checks._published import TABLE_5, TABLE_6, TABLE_12, TABLE_12_MACRO, TABLE_12_ROWS
from paper_checks.tables._tables_3_4 import _key, cells_markdown, mean_cell
from retcon.vocab import ACTIONS

#: The rows' column that marks the full-history design (``oas.real._pair``).
CANDIDATES_COLUMN = "meta_candidates"

#: Table 12's rows and the policy of each (``fixed <op>``: the constant action).
TABLE_12_POLICIES = dict(
    zip(
        TABLE_12_ROWS,
        (
            "always-ret",
            "fixed:abstract",
            "fixed:merge",
            "fixed:rewrite",
            "per-budget-fixed",
            "oas",
            "oas-calibrated@0",
            "oracle",
        ),
        strict=True,
    )
)


def is_full_history(paired) -> bool:
    """Whether every row of ``paired`` was made by the full-history design."""
    col = (getattr(paired, "meta", None) or {}).get(CANDIDATES_COLUMN)
    return (
        col is not None
        and len(col) == paired.n
        and bool(np.all(np.asarray(col).astype(str) == "full-history"))
    )


def retention_abstract_cells(
    key: jax.Array, paired, published: dict, *, oracle: bool, n_resamples: int = 10_000
) -> list[dict]:
    """Retention, abstract, abstract's gain (h/h) and, with ``oracle``, the binary oracle per
    budget: the one computation of Tables 5 and 6.

    Args:
      key: JAX key; cell ``k`` (in the returned order) uses ``fold_in(key, k)``.
      paired: ``oas.PairedData``; every budget of the data gets its cells.
      published: ``budget -> cell`` with ``retention``, ``abstract``, ``gain`` (a ``Gain``) and,
        with ``oracle``, ``oracle`` (``paper_checks._published.TABLE_5`` or ``TABLE_6``); the
        paper's value is ``None`` at a budget it lacks.
      oracle: whether to add the ``binary oracle`` row (per question the better of retention and
        abstract).
      n_resamples: question-bootstrap replicates.

    Returns:
      one dict per (row, budget), rows ``retention``, ``abstract``, ``gain`` (then ``binary
      oracle``): ``row``, ``budget``, the ``mean_cell`` fields, and for ``gain`` also ``helped``,
      ``harmed`` (ours), ``paper_helped``, ``paper_harmed`` and ``paper_interval``.

    References: MODEL §11 (Tables 5, 6).
    """
    y = np.asarray(paired.outcomes, np.float64)
    ret, abstract = y[:, ACTIONS.index("ret")], y[:, ACTIONS.index("abstract")]
    values = {"retention": ret, "abstract": abstract, "gain": abstract - ret}
    if oracle:
        values["binary oracle"] = np.maximum(ret, abstract)
    budget = np.asarray(paired.budget, np.float64)
    groups = np.asarray(paired.group_id).astype(str)
    out = []
    for row, v in values.items():
        for b in np.unique(budget):
            rows = budget == b
            pub = published.get(int(b))
            paper = None
            if pub is not None:
                paper = {
                    "retention": pub.retention,
                    "abstract": pub.abstract,
                    "gain": pub.gain.value,
                    "binary oracle": getattr(pub, "oracle", None),
                }[row]
            k = jax.random.fold_in(key, len(out))
            cell = {"row": row, "budget": int(b)} | mean_cell(
                k, v[rows], groups[rows], paper, n_resamples
            )
            if row == "gain":
                d = v[rows]
                cell |= {
                    "helped": int((d > 0).sum()),
                    "harmed": int((d < 0).sum()),
                    "paper_helped": None if pub is None else pub.gain.helped,
                    "paper_harmed": None if pub is None else pub.gain.harmed,
                    "paper_interval": None if pub is None else [pub.gain.lo, pub.gain.hi],
                }
            out.append(cell)
    return out


def table_6(key: jax.Array, paired, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 6: retention, abstract, abstract's gain (h/h) and the binary oracle per budget, beside
    the paper's ``TABLE_6`` (``retention_abstract_cells`` with ``oracle=True``).

    Args:
      key: JAX key; cell ``k`` (in the returned order) uses ``fold_in(key, k)``.
      paired: ``oas.PairedData`` of the full-history design.
      n_resamples: question-bootstrap replicates.

    References: MODEL §11 (Table 6).
    """
    return retention_abstract_cells(key, paired, TABLE_6, oracle=True, n_resamples=n_resamples)


def table_5(key: jax.Array, paired, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 5: retention, abstract and abstract's gain (h/h) per budget from the rows of a second
    answer model, beside the paper's ``TABLE_5`` (GLM-5.2): ``retention_abstract_cells`` with
    ``oracle=False``, the computation of Table 6.

    Args:
      key: JAX key; cell ``k`` (in the returned order) uses ``fold_in(key, k)``.
      paired: ``oas.PairedData`` of the second answer model (``--second-reader FILE``).
      n_resamples: question-bootstrap replicates.

    References: MODEL §11 (Table 5).
    """
    return retention_abstract_cells(key, paired, TABLE_5, oracle=False, n_resamples=n_resamples)


def per_budget_fixed(ev) -> np.ndarray:
    """``(n,)`` the per-budget policy selected on fit data: in each rotation (test fold ``f``),
    per budget the action of highest mean outcome on the other folds' rows at that budget (ties to
    the earlier action), applied to fold ``f``'s rows (module docstring). Under the split protocol
    (``paper_checks.tables._crossfit.split_protocol``) the choice it made on the train rows."""
    from paper_checks.tables._crossfit import best_per_budget

    if "per-budget-fixed" in ev.chosen:  # the split protocol: selected on train
        return np.asarray(ev.chosen["per-budget-fixed"], np.int64)
    chosen = np.zeros(len(ev.index), np.int64)
    outcomes, budget = np.asarray(ev.outcomes), np.asarray(ev.budget)
    for f in np.unique(ev.fold):
        test, seen = ev.fold == f, ev.fold != f
        chosen[test] = best_per_budget(outcomes[seen], budget[seen], budget[test])
    return chosen


def _choices(ev, policy: str) -> np.ndarray:
    if policy.startswith("fixed:"):
        return np.full(len(ev.index), ACTIONS.index(policy.split(":", 1)[1]), np.int64)
    if policy == "per-budget-fixed":
        return per_budget_fixed(ev)
    if policy == "oracle":
        return np.argmax(ev.outcomes, axis=1).astype(np.int64)  # ties to ret: never harmful
    return np.asarray(ev.chosen[policy], np.int64)


def table_12(key: jax.Array, paired, ev, *, n_resamples: int = 10_000) -> list[dict]:
    """Table 12: each policy's accuracy (harmful choices) per budget and macro-averaged.

    Args:
      key: JAX key; cell ``k`` (in the returned order) uses ``fold_in(key, k)``.
      paired: ``oas.PairedData`` of the full-history design (for the rows' questions and
        conversations).
      ev: the cross-fitted choices of Table 8 (``paper_checks.tables._crossfit.crossfit_evaluate``).
      n_resamples: question-bootstrap replicates.

    Returns:
      one dict per (row, budget) then ``(row, "macro")``, rows in the paper's order: ``row``,
      ``policy``, ``budget`` (an int, or ``"macro"``), ``harms`` (ours), ``paper_harms`` (where
      printed) and the ``mean_cell`` fields of the chosen action's outcome.

    References: MODEL §8, §11 (Table 12, router evaluation).
    """
    rows_ix = np.asarray(ev.index)
    qid = np.asarray(paired.query_id).astype(str)[rows_ix]
    groups = np.asarray(paired.group_id).astype(str)[rows_ix]
    outcomes = np.asarray(ev.outcomes, np.float64)
    out = []
    for row, policy in TABLE_12_POLICIES.items():
        c = _choices(ev, policy)
        y = outcomes[np.arange(len(c)), c]
        harm = y < outcomes[:, 0]
        for b in np.unique(ev.budget):
            at = ev.budget == b
            pub = TABLE_12.get((row, int(b)))
            k = jax.random.fold_in(key, len(out))
            cell = mean_cell(k, y[at], groups[at], None if pub is None else pub[0], n_resamples)
            out.append(
                {"row": row, "policy": policy, "budget": int(b), "harms": int(harm[at].sum())}
                | cell
                | {"paper_harms": None if pub is None else pub[1]}
            )
        # macro: the per-question mean over budgets (every question has every budget)
        labels, inv = np.unique(qid, return_inverse=True)
        per_q = np.bincount(inv, weights=y) / np.bincount(inv)
        q_group = np.empty(len(labels), dtype=object)
        q_group[inv] = groups
        k = jax.random.fold_in(key, len(out))
        cell = mean_cell(k, per_q, q_group.astype(str), TABLE_12_MACRO[row], n_resamples)
        out.append(
            {"row": row, "policy": policy, "budget": "macro", "harms": int(harm.sum())}
            | cell
            | {"paper_harms": None}
        )
    return out


def _table_6_parts(c: dict) -> tuple:
    """The gain row is signed and has helped/harmed counts; the others have neither."""
    gain = c["row"] == "gain"
    hh = f"{c['helped']}/{c['harmed']}" if gain else "-"
    phh = (
        f"{c['paper_helped']}/{c['paper_harmed']}"
        if gain and c["paper_helped"] is not None
        else "-"
    )
    return gain, c["ours"], c["paper"], hh, phh


def _table_12_parts(c: dict) -> tuple:
    return False, c["ours"], c["paper"], str(c["harms"]), _key(c["paper_harms"])


#: Tables 5 (the shape of Table 6, without the binary oracle), 6 and 12 in ``TABLES.md``: the
#: block's name, the pair column (``cells_markdown``), its alignment and the cells' parts.
_HISTORY = (
    ("table_5", "h/h", "---", _table_6_parts),
    ("table_6", "h/h", "---", _table_6_parts),
    ("table_12", "harms", "---:", _table_12_parts),
)


def history_markdown(tables: dict) -> list[str]:
    """The lines of ``TABLES.md`` for Tables 5, 6 and 12 (empty when the block has none)."""
    lines: list[str] = []
    for name, pair, align, parts in _HISTORY:
        if name in tables:
            head = [f"## Table {name[6:]}: {tables[name]['note']}", ""]
            cells = tables[name]["cells"]
            lines += [*cells_markdown(head, cells, pair=pair, align=align, parts=parts), ""]
    return lines


#: What ``TABLES.md`` says of full-history rows (after the data set and the budgets).
FULL_HISTORY_LINE = (
    ", the full-history design: BM25 top 20 turns of the whole memory capped at 2,048 "
    "alphanumeric tokens, retention packed in rank order, generated records capped at the budget; "
    "the paper's values of the tables before Table 6 are of its controlled design, so there they "
    "compare two protocols "
)

#: The reason Tables 6 and 12 are not made from rows of the controlled design.
NOT_FULL_HISTORY = (
    "the rows are not of the full-history design (they come from the controlled, "
    "oracle-evidence protocol); run `--design paper --protocol end-to-end` (retcon pair or "
    "retcon paper-checks) for its BM25 candidates"
)


def lme_reference(dataset: str) -> str:
    """What a table's note adds on a run not on LongMemEval, where the paper measured it."""
    if dataset == "longmemeval":
        return ""
    return (
        "; the paper measured it on LongMemEval (budgets 32-256): its value is a reference at the "
        "budgets both grids share, not the same experiment"
    )


def history_tables(key: jax.Array, paired, ev, dataset: str, *, n_resamples: int = 10_000) -> dict:
    """``{"table_6": .., "table_12": ..}`` with notes on full-history rows, else ``{}``.

    Args:
      key: JAX key; Table 6 uses ``fold_in(key, 6)``, Table 12 ``fold_in(key, 12)``.
      paired: ``oas.PairedData``.
      ev: Table 8's cross-fitted choices on ``paired``.
      dataset: ``"locomo"`` or ``"longmemeval"`` (the notes say which grid the paper's is).
      n_resamples: question-bootstrap replicates.

    References: MODEL §11 (Tables 6, 12).
    """
    if not is_full_history(paired):
        return {}
    offline = (
        "; ours are the offline operators and reader of this run, not the paper's DeepSeek-V3.2"
    )
    where = lme_reference(dataset)
    macro = (
        ""
        if dataset == "longmemeval"
        else "; the macro averages are over this run's budgets, the paper's over 32-256"
    )
    return {
        "table_6": {
            "note": "full-history BM25 (top 20 turns, 2,048-token cap, retention in rank order): "
            "retention, abstract, abstract's gain over retention (h/h), binary oracle (the better "
            "of retention and abstract per question)" + offline + where,
            "cells": table_6(jax.random.fold_in(key, 6), paired, n_resamples=n_resamples),
        },
        "table_12": {
            "note": "full-history four-action test, accuracy (harmful choices) per budget and "
            "macro-averaged, "
            + (
                "under Table 8's split protocol (fit train, calibrate dev, test)"
                if "per-budget-fixed" in ev.chosen
                else "cross-fitted as Table 8"
            )
            + " (one realisation); the paper's Table 12 "
            "budgets are read as 32-256" + offline + where + macro,
            "cells": table_12(jax.random.fold_in(key, 12), paired, ev, n_resamples=n_resamples),
        },
    }
