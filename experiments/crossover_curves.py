"""Figure: dU(B) = U(o) - U(ret) per operator with 95% bands and crossover budgets (MODEL §6).

One panel per source (``theory``, ``sim:<preset>``, ``locomo:<reader>``); the dotted verticals are
the crossover budgets. Claims 1-3 of the paper checks.

Run: ``python -m experiments.crossover_curves --config experiments/crossover_curves.toml --out DIR``; rerun from the
sidecar with ``--from-sidecar DIR/crossover_curves.json``. The numbers come from
``paper_checks.studies.scripts._experiments``; this script only parses, calls and writes.
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("crossover_curves", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
