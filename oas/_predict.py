"""Predictions of a fitted router for paired-data rows, in plain numpy (no JAX on this path).

References: MODEL §8 (policy, calibrated variant).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from oas._paired import PairedData, row_ids
from oas._router import VARIANTS, Router
from retcon.errors import InputError
from retcon.output import atomic_write
from retcon.vocab import ACTIONS


def predict_rows(router: Router, data: PairedData) -> list[dict]:
    """One dict per row: ids, budget, mu_<action> for the four actions, action_<variant>.

    A deployed agent predicts whatever it is given; ``retcon predict`` first refuses rows of
    groups the router was fitted on (``oas._router.check_router_overlap``).
    """
    mu = router.utility(data.features)
    chosen = {v: router.choose(data.features, data.budget, v) for v in VARIANTS}
    rows = []
    for i in range(data.n):
        row = {**row_ids(data, i), "budget": float(data.budget[i])}
        row.update({f"mu_{a}": float(mu[i, j]) for j, a in enumerate(ACTIONS)})
        row.update({f"action_{v}": ACTIONS[int(chosen[v][i])] for v in VARIANTS})
        rows.append(row)
    return rows


def write_predictions(path, rows: list[dict]) -> Path:
    """Write prediction rows atomically as JSONL or CSV (by the suffix of ``path``)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        text = "".join(json.dumps(r) + "\n" for r in rows)
    elif suffix == ".csv":
        buf = io.StringIO()
        w = csv.DictWriter(
            buf, fieldnames=list(rows[0]) if rows else ["instance_id"], lineterminator="\n"
        )
        w.writeheader()
        w.writerows(rows)
        text = buf.getvalue()
    else:
        raise InputError(f"write_predictions: path must end in .jsonl or .csv; got {str(path)!r}.")
    return atomic_write(path, lambda f: f.write(text))
