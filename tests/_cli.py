"""Running the CLI in-process for tests: the exit code and what it printed."""

from __future__ import annotations

from retcon.cli import main


def run_cli(argv, capsys) -> tuple[int | str | None, str, str]:
    """``(exit code, stdout, stderr)`` of ``retcon argv``; an argparse exit counts as its code."""
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err
