"""Running the CLI in-process for tests: the exit code and what it printed."""

from __future__ import annotations

import re

from retcon.cli import main

# The line a long command prints first, before the work (issue 36: ``retcon stress: 9 spillover
# conditions ...``; ``retcon.commands._progress.announce``); an error line says ``: error:``.
_PROGRESS_LINE = re.compile(r"^retcon [a-z][a-z -]*: (?!error: )")


def run_cli(argv, capsys) -> tuple[int | str | None, str, str]:
    """``(exit code, stdout, stderr)`` of ``retcon argv``; an argparse exit counts as its code.
    ``["bench", ...]`` runs ``python -m benchmarks ...`` (where the benchmarks went, issue 45),
    so the tables of bad input keep checking its options."""
    try:
        if argv and argv[0] == "bench":
            from benchmarks.__main__ import main as bench_main

            rc = bench_main(list(argv[1:]))
        else:
            rc = main(argv)
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def error_lines(err: str) -> list[str]:
    """The lines of ``err`` after the command's first progress line, if it printed one.

    The one-line contract of a refusal is about what comes after the line saying what the
    command will do: a check that only the work can make (a size, a write) fails after it.
    """
    lines = err.strip().splitlines()
    if lines and _PROGRESS_LINE.match(lines[0]):
        return lines[1:]
    return lines
