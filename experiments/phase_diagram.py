"""Figure: the Assumption-1 phase diagram: dU over budget x spillover (MODEL §5).

Consolidating a cluster frees tokens for other records (budget spillover) or outranks other
queries' evidence (rank spillover); the colour is the sign and size of dU, the black line dU = 0.

Run: ``python -m experiments.phase_diagram --config experiments/phase_diagram.toml --out DIR``; rerun from the
sidecar with ``--from-sidecar DIR/phase_diagram.json``. The numbers come from
``paper_checks.studies.scripts._experiments``; this script only parses, calls and writes.
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("phase_diagram", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
