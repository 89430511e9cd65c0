"""Figure: harm rate against accuracy of calibrated OAS over the harm target alpha (MODEL §8).

The ridge model is fitted once; each alpha gives a calibrated (max accuracy s.t. harm <= alpha) and a
conformal-risk-control threshold per budget, scored on held-out groups. Claim 9.

Run: ``python -m experiments.harm_tradeoff --config experiments/harm_tradeoff.toml --out DIR``; rerun from the
sidecar with ``--from-sidecar DIR/harm_tradeoff.json``. The numbers come from
``paper_checks.studies.scripts._experiments``; this script only parses, calls and writes.
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("harm_tradeoff", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
