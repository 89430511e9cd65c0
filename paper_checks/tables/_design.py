"""``retcon paper-checks --design paper``: the paper's tables beside ours (MODEL §11).

``paper_tables(key, paired)`` builds the ``tables`` block of ``--json`` and ``report.json`` from
paired data made under the paper's design (``oas.real`` ``--design paper``: the 75-question
sample, budgets 16-128, cheapest-first packing, alphanumeric tokens, capped records):

* **Table 4** (LoCoMo): the 12 cells of ``paper_checks.tables._tables_3_4.table_4``, each with the paper's
  value (``paper_checks._published``), ours, our interval in both units and the in-interval flags.
* **Table 8** (routing baselines): each policy's accuracy and harmful choices per budget, scored
  by grouped five-fold cross-fitting (``paper_checks.tables._crossfit``), with both intervals of the
  accuracy; on rows with ``meta_split`` (a LongMemEval file of the paper's design) by the paper's
  split instead (``paper_checks.tables._crossfit.split_protocol``: fit on train, ``tau_B`` on dev,
  scored on test), and the block's ``router_protocol`` names it. The paper's Table 8 is measured on LongMemEval; its value is shown at the budgets both
  grids share (32, 64, 128) as a reference, not as the same experiment.
* **Table 2** (direct and calibrated OAS) and **Table 11** (MLP - ridge accuracy, the paper's MLP
  control of MODEL §8 against direct OAS): from Table 8's cross-fitted choices, per budget, with
  both intervals; on LoCoMo the paper's LongMemEval values are a reference at the shared budgets.
* **Tables 1, 7, 9, 10** (``paper_checks.tables._tables_1_7_9_10``): fit-stratified gain, gain by type at
  256 (LongMemEval only), budget pressure, operator against operator; measured on LongMemEval in
  the paper, so on LoCoMo its values are a reference at the shared budgets.
* **Table 5** (a second answer model, ``second_reader`` given: ``--second-reader FILE``): Table
  6's computation on FILE's rows, checked first to hold the main rows' design, dataset, question
  ids and budgets (``check_second_reader``).
* **Not made**: the tables these data cannot make, each with its reason.

Which interval a verdict uses: the conversation-level one. LoCoMo's 75 questions sit in 10
conversations, and questions of one conversation share its sessions, speakers and generated
records, so the question bootstrap (the paper's unit) treats correlated questions as independent
and is too narrow; the conversation-level Student-t interval on G - 1 df is the stricter, honest
one (docs/statistics.md). Both are shown.

References: MODEL §11 (protocol, Tables 1, 2, 3, 4, 7, 8, 9, 10, 11), §8 (policies, MLP control).
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from paper_checks._published import (
    TABLE_3,
    TABLE_3_BUDGETS,
    TABLE_5_READER,
)
from paper_checks.tables._crossfit import (
    PROTOCOL_CROSSFIT,
    PROTOCOL_SPLIT,
    crossfit_evaluate,
    has_split,
    split_protocol,
)
from paper_checks.tables._tables_1_7_9_10 import table_1, table_7, table_9, table_10
from paper_checks.tables._tables_2_8_11 import table_2, table_8, table_11
from paper_checks.tables._tables_3_4 import (
    Table4Cell,
    cells_markdown,
    table_4,
    table_4_json,
    table_4_markdown,
)
from paper_checks.tables._tables_5_6_12 import (
    FULL_HISTORY_LINE,
    NOT_FULL_HISTORY,
    history_markdown,
    history_tables,
    is_full_history,
    lme_reference,
    table_5,
)
from retcon.errors import InputError
from retcon.vocab import VOCABULARIES

VERDICT_INTERVAL = (
    "conversation: LoCoMo's questions are nested in 10 conversations whose questions share "
    "sessions and generated records, so the question bootstrap (the paper's unit) is too narrow; "
    "the conversation-level interval is the stricter one, and verdicts use it. Both are shown."
)

VERDICT_INTERVAL_LONGMEMEVAL = (
    "question: a LongMemEval question is its own group (its own haystack), so the two units "
    "coincide up to the interval's method; verdicts use the conversation-level (group) one."
)

#: Why Table 5 is not made without ``--second-reader``.
NOT_SECOND_READER = (
    "second answer model: give --second-reader FILE, the same design paired with a second answer "
    "model (pair --reader llm with another model)"
)

#: The tables of MODEL §11 a LongMemEval run (``--paired`` a ``pair longmemeval --design paper``
#: file) does not make, with the reason.
NOT_MADE_LONGMEMEVAL = {
    "4": "LoCoMo gains: this run grades a LongMemEval file",
    "5": NOT_SECOND_READER,
    "6": "full-history BM25 stress test: " + NOT_FULL_HISTORY,
    "12": "independent full-history four-action test: " + NOT_FULL_HISTORY,
}
#: The tables of MODEL §11 a LoCoMo run does not make, with the reason.
NOT_MADE = {
    "3": "LongMemEval gains: no LongMemEval file in this run",
    "5": NOT_SECOND_READER,
    "6": "full-history BM25 stress test: " + NOT_FULL_HISTORY,
    "7": "by type at 256 on LongMemEval: LoCoMo's grid stops at 128 and its query types are not "
    "LongMemEval's",
    "12": "independent full-history four-action test: " + NOT_FULL_HISTORY,
}


def _count(cells, flag: str) -> dict:
    known = [c[flag] for c in cells if c[flag] is not None]
    return {"in": int(sum(known)), "of": len(known)}


def dataset_of(paired) -> str:
    """``"longmemeval"`` when the rows' query types are LongMemEval's 4-way names, else
    ``"locomo"`` (``retcon.vocab.VOCABULARIES``)."""

    types = set(np.asarray(paired.query_type).astype(str).tolist())
    return "longmemeval" if types <= set(VOCABULARIES.get("longmemeval", ())) else "locomo"


#: The option of ``retcon paper-checks`` that names Table 5's file (its errors name it).
SECOND_READER_OPTION = "--second-reader"


def _design_of(paired) -> str:
    """The rows' design as the refusals name it: ``meta_design`` (``"ours"`` where absent), and
    ``" (full-history)"`` for rows of the full-history design."""
    col = (getattr(paired, "meta", None) or {}).get("meta_design")
    names = sorted(set(np.asarray(col).astype(str).tolist())) if col is not None else ["ours"]
    return "/".join(names) + (" (full-history)" if is_full_history(paired) else "")


def _few(items, k: int = 5) -> str:
    items = sorted(items)
    return ", ".join(map(str, items[:k])) + (
        f" and {len(items) - k} more" if len(items) > k else ""
    )


def check_second_reader(main, second, path: str) -> None:
    """Refuse Table 5's rows unless they are of the main rows' design and dataset and hold the same
    question ids and budgets (MODEL §11: Table 5 is the same questions read by another model).

    Args:
      main: ``oas.PairedData`` of the main reader (the rows every other table is made from).
      second: ``oas.PairedData`` of the second answer model.
      path: the second file as given (the errors name it).

    Raises:
      InputError: naming ``--second-reader``, the file, what was expected and what came (the first
        few question ids or budgets that differ).
    """

    where = f"{SECOND_READER_OPTION} {path}"
    got, want = _design_of(second), _design_of(main)
    if got != want:
        raise InputError(
            f"{where}: its rows are of design {got}; the main rows are of design {want}. Pair "
            "it as the main rows were (retcon pair ... --design paper, the same --protocol)."
        )
    got, want = dataset_of(second), dataset_of(main)
    if got != want:
        raise InputError(
            f"{where}: its rows are of dataset {got}; the main rows are of dataset {want}."
        )
    q_main, q_second = (set(np.asarray(p.query_id).astype(str).tolist()) for p in (main, second))
    if q_main != q_second:
        missing, extra = q_main - q_second, q_second - q_main
        bits = [f"{len(missing)} missing ({_few(missing)})"] if missing else []
        bits += [f"{len(extra)} not in the main rows ({_few(extra)})"] if extra else []
        raise InputError(
            f"{where}: expected the main rows' {len(q_main)} question ids; got "
            f"{len(q_second)}: {'; '.join(bits)}."
        )
    b_main, b_second = (
        sorted(set(np.asarray(p.budget, np.float64).tolist())) for p in (main, second)
    )
    if b_main != b_second:
        shown = [", ".join(f"{b:g}" for b in bs) for bs in (b_main, b_second)]
        raise InputError(
            f"{where}: expected the main rows' budgets [{shown[0]}]; got [{shown[1]}]."
        )
    pairs_main, pairs_second = (
        set(zip(np.asarray(p.query_id).astype(str).tolist(), np.asarray(p.budget).tolist()))
        for p in (main, second)
    )
    if pairs_main != pairs_second:
        missing = sorted(f"{q}@{float(b):g}" for q, b in pairs_main - pairs_second)
        raise InputError(
            f"{where}: expected a row per (question, budget) of the main rows; "
            f"{len(missing)} missing ({_few(missing)})."
        )


def second_reader_name(source) -> str:
    """The second answer model's name: its sidecar's reader (and ``llm_model``), else the file's
    stem (``paper_checks.PairedSource.name``)."""
    side = source.provenance.get("sidecar") or {}
    cfg = side.get("config") if isinstance(side, dict) else None
    if not isinstance(cfg, dict) or not cfg.get("reader"):
        return source.name
    reader, model = cfg["reader"], cfg.get("llm_model")
    return f"{reader} ({model})" if model else str(reader)


def second_reader_table(key: jax.Array, source, dataset: str, *, n_resamples: int = 10_000) -> dict:
    """The ``table_5`` block: Table 5 (``paper_checks.tables._tables_5_6_12.table_5``) on the rows of
    ``source`` (a ``paper_checks.PairedSource`` checked by ``check_second_reader``), its reader
    named, beside the paper's GLM-5.2 values.

    References: MODEL §11 (Table 5).
    """
    name = second_reader_name(source)
    where = lme_reference(dataset)
    return {
        "note": f"second answer model: retention, abstract, abstract's gain over retention (h/h), "
        f"read by {name} ({SECOND_READER_OPTION} {Path(source.path).name}, sha256 "
        f"{source.sha256[:12]}); the paper's reader is {TABLE_5_READER} instead of DeepSeek-V3.2, "
        "the judge fixed" + where,
        "reader": name,
        "file": source.path,
        "sha256": source.sha256,
        "cells": table_5(key, source.data, n_resamples=n_resamples),
    }


def paper_tables(key: jax.Array, paired, *, n_resamples: int = 10_000, second_reader=None) -> dict:
    """The ``tables`` block: Table 4 (LoCoMo) or Table 3 (LongMemEval) and Table 8 beside the
    paper's, the verdict's interval, the tables not made (module docstring).

    Args:
      key: JAX key; Table 4 (or 3) uses ``fold_in(key, 4)``, Table 8 ``fold_in(key, 8)`` (its
        cross-fitting or split protocol, which Tables 2, 11 and 12 share,
        ``fold_in(fold_in(key, 8), 0)``), Table 2
        ``fold_in(key, 2)``, Table 11 ``fold_in(key, 11)``, Tables 1, 7, 9, 10 ``fold_in(key, 1)``.
      paired: ``oas.PairedData`` of the paper's design (LoCoMo, or a LongMemEval file).
      n_resamples: question-bootstrap replicates (the paper: 10,000).
      second_reader: a ``paper_checks.PairedSource`` of a second answer model, checked against
        ``paired`` by ``check_second_reader``: Table 5 from its rows (``fold_in(key, 5)``), and
        "5" leaves ``not_made``; ``None`` (default) leaves the block as before.

    References: MODEL §11.
    """
    dataset = dataset_of(paired)
    gains = {}
    if dataset == "longmemeval":
        gains["published"], gains["budgets"] = TABLE_3, TABLE_3_BUDGETS
    cells = table_4(jax.random.fold_in(key, 4), paired, n_resamples=n_resamples, **gains)
    t4 = table_4_json(cells)

    k8 = jax.random.fold_in(key, 8)
    split = has_split(paired)  # the paper's LongMemEval split (MODEL §11): fit, calibrate, test
    ev = (split_protocol if split else crossfit_evaluate)(jax.random.fold_in(k8, 0), paired)
    t8 = table_8(k8, paired, n_resamples=n_resamples, ev=ev)
    t2 = table_2(jax.random.fold_in(key, 2), paired, ev, n_resamples=n_resamples)
    t11 = table_11(jax.random.fold_in(key, 11), paired, ev, n_resamples=n_resamples)
    gain_table = "table_3" if dataset == "longmemeval" else "table_4"
    protocol = (
        f"{PROTOCOL_SPLIT} ({len(np.unique(np.asarray(paired.query_id)[ev.index]))} test "
        "questions; meta_split)"
        if split
        else f"{PROTOCOL_CROSSFIT} by question"
    )
    choices = "split-protocol" if split else "cross-fitted"
    note = (
        "the paper's Table 8 is measured on LongMemEval (budgets 32-256); ours on "
        + (
            "this LongMemEval-format file under the paper's design"
            if dataset == "longmemeval"
            else "LoCoMo under the paper's design"
        )
        + ", "
        + protocol
        + (
            ""
            if dataset == "longmemeval"
            else "; the paper's value is a reference at the budgets both grids share, not the same experiment"
        )
    )
    not_made = NOT_MADE_LONGMEMEVAL if dataset == "longmemeval" else NOT_MADE
    more = more_tables(jax.random.fold_in(key, 1), paired, dataset, n_resamples=n_resamples)
    history = history_tables(
        jax.random.fold_in(key, 6), paired, ev, dataset, n_resamples=n_resamples
    )
    if history:  # the full-history design's rows make Tables 6 and 12 (MODEL §11)
        not_made = {k: v for k, v in not_made.items() if k not in ("6", "12")}
    second = {}
    if second_reader is not None:  # a second answer model's rows make Table 5 (MODEL §11)
        second["table_5"] = second_reader_table(
            jax.random.fold_in(key, 5), second_reader, dataset, n_resamples=n_resamples
        )
        not_made = {k: v for k, v in not_made.items() if k != "5"}
    router = {"router_protocol": PROTOCOL_SPLIT} if split else {}  # LoCoMo keeps its bytes
    elsewhere = lme_reference(dataset)  # Tables 2 and 11 were measured on LongMemEval
    return {
        "design": "paper",
        "dataset": dataset,
        **router,
        "n_questions": len(np.unique(np.asarray(paired.query_id).astype(str))),
        "n_conversations": len(np.unique(np.asarray(paired.group_id).astype(str))),
        "n_resamples": n_resamples,
        "verdict_interval": VERDICT_INTERVAL_LONGMEMEVAL
        if dataset == "longmemeval"
        else VERDICT_INTERVAL,
        gain_table: {
            "cells": t4,
            "paper_in_question_interval": _count(t4, "paper_in_question_interval"),
            "paper_in_conversation_interval": _count(t4, "paper_in_conversation_interval"),
        },
        "table_8": {"note": note, "rows": t8},
        "table_2": {
            "note": "direct and calibrated OAS (alpha = 0), gain over retention and harmful "
            "choices, from Table 8's " + choices + " choices" + elsewhere,
            "cells": t2,
        },
        "table_11": {
            "note": "MLP - ridge accuracy: the MLP control (one ReLU layer, width and decay by "
            "inner grouped CV) minus direct OAS, paired by question, from Table 8's "
            + choices
            + " choices"
            + elsewhere,
            "cells": t11,
        },
        **more,
        **second,
        **history,
        "not_made": [{"table": k, "reason": v} for k, v in not_made.items()],
    }


#: Each extra table's function, its name in the block, and whether it needs LongMemEval's types
#: and its 256-token budget.
_MORE = (
    ("table_1", "fit-stratified gain over retention", table_1, False),
    ("table_7", "gain over retention at 256 tokens by query type", table_7, True),
    ("table_9", "budget pressure (f_B: the share of evidence turns cheapest-first retention packs "
                "whole)", table_9, False),
    ("table_10", "operator against operator (accuracy difference)", table_10, False),
)  # fmt: skip


def more_tables(key: jax.Array, paired, dataset: str, *, n_resamples: int = 10_000) -> dict:
    """Tables 1, 7 (LongMemEval only), 9 and 10 (``paper_checks.tables._tables_1_7_9_10``), each with a note
    and its cells; table ``k`` uses ``fold_in(key, k)``.

    References: MODEL §11 (Tables 1, 7, 9, 10).
    """
    lme = dataset == "longmemeval"
    out = {}
    for k, (name, title, fn, lme_only) in enumerate(_MORE):
        if lme_only and not lme:
            continue
        out[name] = {
            "note": title + lme_reference(dataset),
            "cells": fn(jax.random.fold_in(key, k), paired, n_resamples=n_resamples),
        }
    return out


def skipped_tables(reason: str) -> dict:
    """The ``tables`` block when the paper's design has no data to run on (LoCoMo absent)."""
    return {
        "design": "paper",
        "skipped": reason,
        "not_made": [{"table": t, "reason": reason} for t in ("1", "2", "4", "8", "9", "10", "11")]
        + [{"table": k, "reason": v} for k, v in NOT_MADE.items()],
    }


def tables_markdown(tables: dict) -> str:
    """``TABLES.md``: the tables block in words and markdown tables."""
    not_made = ["## Tables not made", ""]
    not_made += [f"- Table {t['table']}: {t['reason']}." for t in tables["not_made"]]
    heading = "# The paper's tables beside ours (--design paper)"
    if "skipped" in tables:
        return "\n".join([heading, "", *not_made]) + "\n"
    lme = tables.get("dataset") == "longmemeval"
    name = "table_3" if lme else "table_4"
    t4 = tables[name]
    q, c = t4["paper_in_question_interval"], t4["paper_in_conversation_interval"]
    title = "Table 3" if lme else "Table 4"
    md = (
        table_4_markdown(_cells(t4["cells"]), "Table 3: LongMemEval", "")
        if lme
        else table_4_markdown(_cells(t4["cells"]))
    ).rstrip("\n")
    lines = [
        heading,
        "",
        (
            f"A LongMemEval-format file under the paper's design: {tables['n_questions']} "
            "questions, budgets 32-256"
            if lme
            else f"LoCoMo under the paper's design: {tables['n_questions']} questions in "
            f"{tables['n_conversations']} conversations, budgets 16-128"
        )
        + (
            FULL_HISTORY_LINE
            if "table_6" in tables
            else ", cheapest-first packing, alphanumeric tokens, generated records capped at the "
            "budget "
        )
        + f"(docs/paper-protocol.md). Question bootstrap: {tables['n_resamples']} replicates.",
        "",
        f"Which interval a verdict uses: {tables['verdict_interval']}",
        "",
        *(
            [
                f"Router tables (8, 2, 11 and 12 where made): {tables['router_protocol']} "
                "(MODEL §11); the other tables use every question.",
                "",
            ]
            if "router_protocol" in tables
            else []
        ),
        f"{title}: the paper's value lies in our question interval in {q['in']} of {q['of']} "
        f"cells, in our conversation interval in {c['in']} of {c['of']}.",
        "",
        md,
        "",
        "## Table 8: routing baselines, accuracy (harmful choices)",
        "",
        tables["table_8"]["note"] + ".",
        "",
    ]
    lines = cells_markdown(
        lines, tables["table_8"]["rows"], pair="harms", align="---:", parts=_table_8_parts
    )
    for name in ("table_2", *(m[0] for m in _MORE), "table_11"):
        if name in tables:
            head = [f"## Table {name.split('_')[1]}: {tables[name]['note']}", ""]
            lines += ["", *cells_markdown(head, tables[name]["cells"], _KEYS[name])]
    history = history_markdown(tables)  # Table 5 of a second reader, 6 and 12 of full history
    lines += ["", *history[:-1]] if history else []
    return "\n".join([*lines, "", *not_made]) + "\n"


#: The columns that name a cell of each extra table, before the shared ones.
_KEYS = {
    "table_2": ("row", "budget", "harms", "paper_harms"),
    "table_1": ("stratum", "operator", "budget"),
    "table_7": ("type", "operator", "budget"),
    "table_9": ("row", "budget"),
    "table_10": ("row", "budget"),
    "table_11": ("row", "budget", "ridge_accuracy", "paper_ridge_accuracy"),
}


def _table_8_parts(r: dict) -> tuple:
    """Table 8's accuracy is unsigned; its pair column is the harmful choices."""
    p = r["paper"] or {}
    return False, r["accuracy"], p.get("accuracy"), str(r["harms"]), str(p.get("harms", "-"))


def _cells(cells: list[dict]):

    return [Table4Cell(**{**c, "paper_interval": tuple(c["paper_interval"])}) for c in cells]
