"""``retcon bench``: moved. The benchmarks are not part of the installed package any more; from a
clone of the repository they run as ``python -m benchmarks`` (docs/performance.md). For one
release this command says so: one line, exit status 2.
"""

from __future__ import annotations

MOVED = (
    "the benchmarks left the installed package: from a clone of the repository run "
    "`python -m benchmarks` with the same options (docs/performance.md)."
)


def register(subparsers) -> None:
    """Add ``retcon bench``, which only points to ``python -m benchmarks``."""
    # no option prefix: every argument, --quick or -h included, is taken and answered alike
    p = subparsers.add_parser(
        "bench", help="moved: python -m benchmarks, from a clone", prefix_chars="\0", add_help=False
    )
    p.add_argument("rest", nargs="*")
    p.set_defaults(func=run)


def run(args) -> int:
    from retcon.errors import InputError

    raise InputError(MOVED)
