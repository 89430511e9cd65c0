"""Figure: crossover budget B* against the evidence length L (MODEL §6.5).

Theory at several length scales (B* proportional to L exactly), the sim presets, and LoCoMo
evidence-length tertiles when the data is present: relative budget pressure B/L governs. Claim 5.

Run: ``python -m experiments.crossover_vs_length --config experiments/crossover_vs_length.toml --out DIR``; rerun from the
sidecar with ``--from-sidecar DIR/crossover_vs_length.json``. The numbers come from
``paper_checks.studies.scripts._experiments``; this script only parses, calls and writes.
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("crossover_vs_length", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
