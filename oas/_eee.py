"""Paired data and verdicts in Every Eval Ever's format (instance-level samples and an aggregate).

Every Eval Ever (EEE) stores one instance-level record per model answer and an aggregate record
per evaluation run. A paired row (MODEL §8) is four answers, one per action, so it becomes four
instance records; the action, budget, group and query type ride in ``metadata`` (strings, as the
schema requires), where ``retcon pair import --from eee`` finds them again. ``is_correct`` is
``score >= 0.5`` (a graded outcome keeps its value in ``score``). The verdicts of
``retcon paper-checks`` become the aggregate's results, one per claim, on EEE's ``levels`` scale
(FAIL, PARTIAL, PASS; INCONCLUSIVE and SKIPPED as its unknown level, score -1).

The schema version written is ``0.3.0`` (every_eval_ever's ``schemas/``), in its repository
layout: ``data/BENCHMARK/DEVELOPER/MODEL/UUID.json`` (the aggregate) beside
``UUID_samples.jsonl`` (the instances); ``eee_paths`` names them, the UUID derived from the
evaluation id (the same run, the same names). No wall clock is written: ``retrieved_timestamp`` is
``"0"`` (set it when you upload), so the same input gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid

from retcon.vocab import ACTIONS

INSTANCE_SCHEMA_VERSION = "0.3.0"
AGGREGATE_SCHEMA_VERSION = "0.3.0"
VERDICT_LEVELS = ("FAIL", "PARTIAL", "PASS")


def eee_instances(data, *, model_id: str, evaluation_id: str, evaluation_name: str) -> list[dict]:
    """EEE instance-level records of paired data: four per row (``ACTIONS`` order).

    Args:
      data: an ``oas.PairedData``.
      model_id: the reader (model) that answered.
      evaluation_id: the run, shared with the aggregate (``eee_aggregate``).
      evaluation_name: the evaluation's name; each record's is ``NAME/ACTION`` (no
        ``evaluation_result_id``: every claim was graded on all the records).

    Returns:
      JSON-ready dicts, row-major (row 0's four actions first).
    """
    out = []
    for i in range(len(data.budget)):
        meta = {
            "instance_id": str(data.instance_id[i]),
            "group_id": str(data.group_id[i]),
            "query_type": str(data.query_type[i]),
            "budget": repr(float(data.budget[i])),
        }
        for j, a in enumerate(ACTIONS):
            y = float(data.outcomes[i, j])
            out.append(
                {
                    "schema_version": INSTANCE_SCHEMA_VERSION,
                    "evaluation_id": evaluation_id,
                    "model_id": model_id,
                    "evaluation_name": f"{evaluation_name}/{a}",
                    "sample_id": str(data.query_id[i]),
                    "interaction_type": "single_turn",
                    "input": {"raw": str(data.query_id[i]), "reference": []},
                    "output": {"raw": []},
                    "answer_attribution": [],
                    "evaluation": {"score": y, "is_correct": y >= 0.5},
                    "metadata": {**meta, "action": a},
                }
            )
    return out


def eee_paths(
    evaluation_id: str, model_id: str, *, benchmark: str = "retcon-paired"
) -> tuple[str, str]:
    """``(aggregate, samples)``: the repository-relative paths EEE's schema asks for
    (``data/BENCHMARK/DEVELOPER/MODEL/UUID.json`` and ``..._samples.jsonl``; the developer is
    ``unknown``, the UUID a version-4 UUID made from the evaluation id's sha256)."""
    digest = hashlib.sha256(evaluation_id.encode()).digest()[:16]
    uid = str(uuid.UUID(bytes=digest, version=4))
    model = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-") or "model"
    base = f"data/{benchmark}/unknown/{model}/{uid}"
    return f"{base}.json", f"{base}_samples.jsonl"


def _level(verdict: str) -> float:
    return float(VERDICT_LEVELS.index(verdict)) if verdict in VERDICT_LEVELS else -1.0


def _num(v) -> str:
    return "null" if v is None or (isinstance(v, float) and not math.isfinite(v)) else repr(v)


def eee_aggregate(
    report: dict,
    *,
    model_id: str,
    evaluation_id: str,
    dataset_name: str,
    dataset_sha256: str,
    instances_file: str,
    instances_sha256: str,
    instances_rows: int,
    version: str,
) -> dict:
    """The EEE aggregate record of a ``retcon paper-checks`` report (``report_json``'s dict).

    One ``evaluation_results`` entry per claim: the verdict on the levels scale (``score``), the
    measured value, its interval and the verdict in ``score_details.details`` (strings).
    """
    results = []
    for c in report["claims"]:
        ci = c.get("ci") or [None, None]
        results.append(
            {
                "evaluation_result_id": f"claim-{c['claim_id']}",
                "evaluation_name": f"retcon paper-checks claim {c['claim_id']}",
                "source_data": {
                    "dataset_name": dataset_name,
                    "source_type": "other",
                    "additional_details": {"sha256": dataset_sha256},
                },
                "metric_config": {
                    "evaluation_description": str(c.get("claim", "")),
                    "metric_id": "retcon.paper_checks.verdict",
                    "metric_name": "verdict",
                    "lower_is_better": False,
                    "score_type": "levels",
                    "level_names": list(VERDICT_LEVELS),
                    "has_unknown_level": True,
                },
                "score_details": {
                    "score": _level(c["verdict"]),
                    "details": {
                        "verdict": str(c["verdict"]),
                        "measured": _num(c.get("measured")),
                        "ci_lower": _num(ci[0]),
                        "ci_upper": _num(ci[1]),
                        "data": str(c.get("data", "")),
                    },
                },
            }
        )
    return {
        "schema_version": AGGREGATE_SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": "0",
        "source_metadata": {
            "source_name": "retcon paper-checks",
            "source_type": "evaluation_run",
            "source_organization_name": "retcon user",
            "evaluator_relationship": "other",
        },
        "model_info": {
            "name": model_id,
            "id": model_id,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "eval_library": {"name": "retcon", "version": version},
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": instances_file,
            "hash_algorithm": "sha256",
            "checksum": instances_sha256,
            "total_rows": instances_rows,
        },
    }


def eee_jsonl(records: list[dict]) -> str:
    """One JSON object a line (sorted keys: the same records give the same bytes)."""
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
