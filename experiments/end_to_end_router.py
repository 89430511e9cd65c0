"""Deployable routers end to end: post-retrieval features, the theory router, the oracle shift.

Usage::

    python -m experiments.end_to_end_router --out DIR [--e2e e2e.jsonl --oracle oracle.jsonl
        --data locomo10.json] [--sim] [--recalls 1,0.9,...] [--instances 8000] [--seed 0]

LoCoMo (``--e2e``, end-to-end rows of ``retcon pair locomo --protocol end-to-end``, BM25 top 4
sessions by default; ``--oracle``, the oracle-protocol rows of the same questions): the
post-retrieval features 12-14 are recomputed from the texts (``oas.real.locomo_retrieval_features``)
and ``oas.real.loco_deployable`` scores, by leave one conversation out, the ridge router on each
feature group, the group selected inside the training folds, the theory router identified on
end-to-end rows, and the ridge router trained on oracle rows and deployed end to end (argmax and
its ``tau_B``-calibrated variant). The oracle protocol's own gain and headroom come from the same
function on the oracle rows (base features). Intervals: ``retcon.inference.group_t_interval``
on the per-conversation gains.

Simulation (``--sim``): ``locomo-like`` at each retriever recall (the existing sweep's grid), the
same scoring on groups of questions; features 12-14 come from the retriever's noisy scores.

Error rates of the rule "a router beats best-fixed end to end" (``--rule-oc``): the
``deployable`` and ``anchored`` policies' YES / NO / UNDECIDED from their 95% t interval, in
``paper_checks.studies._router_oc.router_world`` worlds at LoCoMo's end-to-end shape (``--signals``; 0 is
the null), ``--datasets`` data sets per world; each data set's record is appended to
``DIR/rule_oc.jsonl`` as it finishes, and a rerun resumes from it.

The ``--top-k`` sweep (``--topk LABEL=FILE``, repeated; each file an end-to-end run of the same
questions at one ``--top-k``, the label ``s4``, ``t20``: granularity letter and k): per run the
cluster's and the packed units' recall, the crossovers (``oas.real.crossover_ci``), and the
deployable routers' LOCO gains over best-fixed; then ``k-selected`` per granularity: for each
held-out conversation the ``k`` whose best-fixed policy (fitted on the nine training
conversations) scores best on them, so the choice of ``k`` never sees the held-out conversation,
scored against every fixed ``k`` (per-conversation differences of accuracy, 95% t).

Writes ``DIR/end_to_end_router.json`` and prints the tables (Markdown).
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("end_to_end_router", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
