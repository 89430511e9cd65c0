"""The ``retcon`` command line: one subcommand per job, registered by the package that owns it.

Conventions every subcommand follows:
  * ``--json`` prints exactly one JSON object on stdout and nothing else there;
  * ``--out DIR`` writes figures, tables and a JSON sidecar (config, seed, version), atomically;
  * ``--seed S`` (default 0) is the root JAX key of the run;
  * bad input exits with status 2 and one line on stderr naming the option, file, row or field,
    what was expected and what came; never a traceback.

Each owning package has a ``_cli.py`` with ``register(subparsers)``; it adds its parsers and sets
``func`` to a ``run(args) -> int`` that imports the heavy modules lazily, so ``retcon --help``
stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from retcon.errors import InputError

# Modules whose `register(subparsers)` adds subcommands, in the order `--help` lists them.
_COMMAND_MODULES = (
    "theory.cli",
    "sim.cli",
    "oas.cli",
    "oas.real.cli",
    "paper_checks.cli",
    "retcon.bench.cli",
)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``retcon crossover: error: ...`` and exit status 2."""

    def error(self, message: str):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> ArgumentParser:
    from retcon import __version__

    parser = ArgumentParser(
        prog="retcon",
        description="Retain or consolidate: budget-dependent memory operator selection (theory, simulation, OAS router).",
    )
    parser.add_argument("--version", action="version", version=f"retcon {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def add_common(
    parser: argparse.ArgumentParser, *, out: bool = True, seed: bool = True, json_flag: bool = True
) -> None:
    """Add the shared options ``--json``, ``--out DIR`` and ``--seed S`` to a subcommand."""
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    if out:
        parser.add_argument(
            "--out",
            metavar="DIR",
            default=None,
            help="directory for figures, tables and the JSON sidecar",
        )
    if seed:
        parser.add_argument(
            "--seed", type=int, default=0, help="root JAX key of the run (default 0)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        sys.stderr.write(f"{parser.prog} {args.command}: error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(
            f"{parser.prog} {args.command}: interrupted; finished outputs and caches are kept.\n"
        )
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
