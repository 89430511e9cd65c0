"""Figure: accuracy of OAS against the fixed policies, per budget, with grouped 95% CIs (MODEL §8).

Policies are fitted on training groups and scored on held-out groups (``oas.evaluate``). Claim 7.

Run: ``python -m experiments.oas_vs_fixed --config experiments/oas_vs_fixed.toml --out DIR``; rerun from the
sidecar with ``--from-sidecar DIR/oas_vs_fixed.json``. The numbers come from
``paper_checks.studies.scripts._experiments``; this script only parses, calls and writes.
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("oas_vs_fixed", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
