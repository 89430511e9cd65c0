"""OAS gain over best-fixed against retriever recall and type-classifier accuracy (simulation).

Usage::

    python -m experiments.end_to_end_sim --out DIR [--preset locomo-like] [--instances 8000]
        [--budgets 8] [--recalls 1,0.9,...] [--accuracies 1,0.85,...|scenario] [--groups 10]
        [--seed 0] [--resamples 500]

Both knobs are scenario parameters of ``sim`` (docs/simulation.md): ``retriever.recall`` (each
evidence record is found with this probability; a missed record is absent from every action's
context and from the router's features) and ``classifier.accuracy`` (the router reads a type
predicted with uniform confusion). Every cell of the grid is ``dataclasses.replace`` of the preset,
simulated with the same key, so the cells share their queries, their outcome draws, and nested
misses and type errors (common random numbers). Each cell's paired data (``oas.simulate_paired``)
are scored by leave-one-group-out (``oas.real.recall_accuracy_sweep``, ``oas.real.loco_policies``: ridge router and best-fixed
fitted on the other groups, gains with grouped bootstrap CIs). ``--accuracies scenario`` keeps
the scenario file's own ``[classifier]`` (e.g. a full confusion matrix) as the one column. Writes ``DIR/end_to_end_sim.png``
(heatmap of the OAS gain, and the two one-dimensional slices through the perfect corner with
their CIs) and ``DIR/end_to_end_sim.json`` (sidecar and every cell).
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("end_to_end_sim", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
