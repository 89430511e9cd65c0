"""Oracle protocol vs end to end on real paired data: the side-by-side table (docs/end-to-end.md).

Usage (the paired files from ``retcon pair locomo``, see docs/end-to-end.md)::

    python -m experiments.end_to_end --run oracle=ORACLE.jsonl --run e2e-gold-type=GOLD.jsonl \
        --run e2e=E2E.jsonl --out DIR [--seed 0] [--resamples 1000]

Writes ``DIR/end_to_end.json`` (per run: summary, crossover CIs, leave-one-conversation-out
policies, retrieval recall, classifier report; the gap split into retrieval and type) and
``DIR/end_to_end.md`` (the table), ``DIR/end_to_end.png`` (accuracy per action against budget,
one line style and marker per run), and prints the table.
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("end_to_end", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
