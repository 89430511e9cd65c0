"""Figure: coverage C and replacement R against the budget, per operator (MODEL §4).

Proposition 1 splits dU = C + R by the raw-grounded region: coverage (queries whose raw evidence
does not fit) is the gain, replacement (queries it does fit) the loss.

Run: ``python -m experiments.coverage_replacement --config experiments/coverage_replacement.toml --out DIR``; rerun from the
sidecar with ``--from-sidecar DIR/coverage_replacement.json``. The numbers come from
``paper_checks.studies.scripts._experiments``; this script only parses, calls and writes.
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("coverage_replacement", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
