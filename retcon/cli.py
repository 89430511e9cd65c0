"""The ``retcon`` command line: one subcommand per job, registered by the package that owns it.

Conventions every subcommand follows:
  * ``--json`` prints exactly one JSON object on stdout and nothing else there; NaN and infinities
    are ``null`` with the reason in a ``status`` field (``retcon.output.to_jsonable``);
  * ``--out DIR`` is always a folder for figures, tables and a JSON sidecar (config, seed,
    version), written as one set (``retcon.output.OutputSet``); a single output file has its own
    option (``--output FILE``, ``--router-out FILE``, ``--decisions FILE``); every output target is
    checked before the work starts, and the command says what it wrote where;
  * ``--seed S`` (default 0, an integer in [0, 2**32)) is the root JAX key of the run;
  * ``-v`` / ``-q`` make the progress messages on stderr more or less verbose;
  * help goes to stdout; bad input exits with status 2 and one line on stderr naming the option,
    file, row or field, what was expected and what came; never a traceback.

Each package's command line is a module of ``retcon.commands`` (``retcon.commands.theory`` for
``crossover``, ``retcon.commands.sim`` for ``simulate`` and ``stress``, ...) with
``register(subparsers)``; it adds its parsers and sets ``func`` to a ``run(args) -> int`` that
imports the package it drives inside the function, so ``retcon --help`` stays fast. No package
imports these modules: the command lines sit on top of every layer (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from retcon.errors import InputError, cli_spelling, seed_type

# Modules whose `register(subparsers)` adds subcommands, in the order `--help` lists them.
_COMMAND_MODULES = (
    "retcon.commands.theory",
    "retcon.commands.advise",
    "retcon.commands.sim",
    "retcon.commands.oas",
    "retcon.commands.real",
    "retcon.commands.fidelity",
    "retcon.commands.llm_check",
    "retcon.commands.timeline",
    "retcon.commands.identify",
    "retcon.commands.paper_checks",
    "retcon.commands.bench",
)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``retcon crossover: error: ...`` and exit status 2."""

    def error(self, message: str):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


class _VersionAction(argparse.Action):
    """``--version``: print ``retcon VERSION`` on stdout and exit; the version is read only then."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        kwargs.setdefault("help", "show the version and exit")
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from retcon import __version__

        sys.stdout.write(f"retcon {__version__}\n")
        parser.exit()


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="retcon",
        description="Retain or consolidate: budget-dependent memory operator selection (theory, simulation, OAS router).",
    )
    parser.add_argument("--version", action=_VersionAction)
    _add_verbosity(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _add_verbosity(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    # On subcommands the default is SUPPRESS, so `retcon -v simulate` is not reset by the subparser.
    default = 0 if top else argparse.SUPPRESS
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default,
        help="more detail: progress on stderr, full tables on stdout where a command has them",
    )
    parser.add_argument(
        "-q", "--quiet", action="count", default=default, help="no progress messages on stderr"
    )


def add_common(
    parser: argparse.ArgumentParser,
    *,
    out: bool = True,
    seed: bool = True,
    json_flag: bool = True,
    figures: bool = False,
) -> None:
    """Add the shared options ``--json``, ``--out DIR``, ``--seed S`` and ``-v``/``-q``; with
    ``figures`` (a command that draws) also ``--format png|pdf|svg``."""
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    if out:
        parser.add_argument(
            "--out",
            metavar="DIR",
            default=None,
            help="folder for figures, tables and the JSON sidecar (created if absent)",
        )
    if seed:
        parser.add_argument(
            "--seed",
            type=seed_type,
            default=0,
            metavar="S",
            help="root JAX key of the run, an integer in [0, 2**32) (default 0)",
        )
    if figures:
        from retcon.plots import FORMATS  # light: no matplotlib until a figure is drawn

        parser.add_argument(
            "--format",
            choices=FORMATS,
            default="png",
            help="file format of the figures written under --out (default png)",
        )
    _add_verbosity(parser)


class Moved(argparse.Action):
    """An option that moved (to another option or form): refused while parsing with one line,
    ``const`` (what to use instead)."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(self.const)


def add_moved_out(parser: argparse.ArgumentParser, new: str) -> None:
    """A hidden ``--out`` that says which option replaced it (``--out`` is always a folder).

    For the commands that write one file (``new``, e.g. ``"--output FILE"``): ``--out`` there is
    refused while parsing, with one line naming the option to use.
    """
    moved = f"this command writes one file: use {new} (--out always names a folder)"
    parser.add_argument("--out", action=Moved, const=moved, help=argparse.SUPPRESS)


def print_json(obj) -> None:
    """Print ``obj`` as one line of strict JSON on stdout (NaN and infinities as ``null``)."""
    from retcon.output import dumps

    sys.stdout.write(dumps(obj) + "\n")


def parse_list(
    text: str, item: Callable[[str], Any] = float, *, what: str = "numbers", example: str = ""
) -> list:
    """The items of one option value, separated by commas and/or spaces (``"32,64"``, ``"32 64"``).

    The one list syntax of the command line; every list option parses through it (``list_type``).

    Args:
      text: the value as typed.
      item: converts one piece; a ``ValueError``/``TypeError`` from it is reported as "expected
        ``what``", an ``argparse.ArgumentTypeError`` keeps its own words.
      what: the items, as the message names them (``"budgets in tokens"``).
      example: a value that would be accepted, for the message (``"32,64"``).

    Raises:
      argparse.ArgumentTypeError: ``expected WHAT separated by commas (e.g. EXAMPLE); got 'PIECE'``;
        argparse prefixes the option (``argument --budgets: ...``) and exits with status 2.
    """
    eg = f" (e.g. {example})" if example else ""
    pieces = [piece for piece in re.split(r"[,\s]+", str(text)) if piece]
    if not pieces:
        raise argparse.ArgumentTypeError(
            f"expected {what} separated by commas{eg}; got {str(text)!r}"
        )
    out = []
    for piece in pieces:
        try:
            out.append(item(piece))
        except (ValueError, TypeError):
            raise argparse.ArgumentTypeError(
                f"expected {what} separated by commas{eg}; got {piece!r}"
            ) from None
    return out


def list_type(
    item: Callable[[str], Any] = float, *, what: str = "numbers", example: str = ""
) -> Callable[[str], list]:
    """argparse ``type=`` of a list option: ``parse_list`` with these ``item``, ``what``, ``example``.

    With ``nargs="+"`` add ``action=JoinLists`` so ``--budgets 32,64 128`` gives one flat list.
    """

    def parse(text: str) -> list:
        return parse_list(text, item, what=what, example=example)

    parse.__name__ = what  # argparse names the type by it in its own messages
    return parse


class JoinLists(argparse.Action):
    """``nargs="+"`` with a ``list_type``: the tokens' lists joined into one list."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, [x for v in values or () for x in v])


def add_llm_options(g) -> None:
    """The endpoint options of every command that calls an LLM, with one set of help texts.

    ``--llm-base-url`` (repeatable), ``--llm-model``, ``--llm-api-key``, ``--llm-timeout``, the
    transport options (``--llm-follow-redirects``, ``--llm-max-response-bytes``), ``--llm-cache``
    and ``--concurrency``; ``llm_options(args)`` reads them back. Unset options are ``None`` and
    ``oas.real.resolve_endpoint`` fills them from the environment.

    Args:
      g: the parser or argument group to add them to.
    """
    g.add_argument(
        "--llm-base-url",
        action="append",
        default=None,
        metavar="URL",
        help="OpenAI-compatible endpoint; repeat for several servers of the same model (requests "
        "spread by load); default $RETCON_LLM_BASE_URL (comma-separated list), else "
        "$OPENAI_BASE_URL",
    )
    g.add_argument("--llm-model", default=None, help="default $RETCON_LLM_MODEL")
    g.add_argument(
        "--llm-api-key",
        default=None,
        help="default $RETCON_LLM_API_KEY (sent only to the hosts of $RETCON_LLM_BASE_URL), else "
        "$OPENAI_API_KEY (only to api.openai.com and $OPENAI_BASE_URL's host); docs/llm.md",
    )
    g.add_argument(
        "--llm-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds to wait for one response before retrying (default $RETCON_LLM_TIMEOUT, "
        "else 300)",
    )
    g.add_argument(
        "--llm-follow-redirects",
        action="store_true",
        help="follow HTTP redirects from the endpoint (off: a redirect is an error); the API key "
        "is never sent to another scheme, host or port",
    )
    g.add_argument(
        "--llm-max-response-bytes",
        type=int,
        default=None,
        metavar="N",
        help="longest response body accepted (default $RETCON_LLM_MAX_RESPONSE_BYTES, else 1 MiB)",
    )
    g.add_argument("--llm-cache", metavar="DIR", default=None, help="response cache folder")
    g.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help="LLM requests in flight at once, over all servers (default $RETCON_LLM_CONCURRENCY, "
        "else 8); rows are the same for any N",
    )


def llm_options(args) -> dict:
    """The ``add_llm_options`` values as ``PairJob.llm`` / ``make_operators("llm")`` keywords.

    Options left unset stay ``None``: ``oas.real.resolve_endpoint``, the one reader of the
    endpoint's environment, fills them (and binds an environment key to its own hosts).
    A ``--llm-cache`` folder is checked here, before any work (the client checks what it holds).
    """
    if args.llm_cache is not None:
        from retcon.output import check_out_dir

        check_out_dir("--llm-cache", args.llm_cache, what="the cached LLM responses")
    return {
        "base_url": args.llm_base_url,
        "model": args.llm_model,
        "api_key": args.llm_api_key,
        "cache_dir": args.llm_cache,
        "concurrency": args.concurrency,
        "timeout": args.llm_timeout,
        "follow_redirects": bool(getattr(args, "llm_follow_redirects", False)),
        "max_response_bytes": getattr(args, "llm_max_response_bytes", None),
    }


def write_sidecar(
    folder: Any, config: Any, *, seed: int | None, command: str, **extra: Any
) -> Path:
    """Write ``folder / "sidecar.json"`` (``retcon.output.sidecar``) atomically; return its path.

    Args:
      folder: a ``Path``, or the ``retcon.output.OutputSet`` of the run (its ``/`` stages the file).
    """
    from retcon.output import sidecar, write_json_atomic

    target = (
        folder / "sidecar.json" if not isinstance(folder, str) else Path(folder) / "sidecar.json"
    )
    return write_json_atomic(target, sidecar(config, seed=seed, command=command, **extra))


def check_out(args, inputs: Sequence[tuple[str, Any]] = ()) -> None:
    """Check ``--out DIR`` (when given) before any work: a folder that can be written and none of
    ``inputs``, the ``(option, path)`` pairs the command reads (``retcon.output.check_out_dir``)."""
    if getattr(args, "out", None) is not None:
        from retcon.output import check_out_dir

        check_out_dir("--out", args.out, inputs=list(inputs))


def write_set(folder: str | os.PathLike, files: dict[str, Any], *, last=("sidecar.json",)):
    """Write ``files`` under ``--out DIR`` as one ``retcon.output.OutputSet``, in their order.

    Each value is the file's text (``str``), a function that writes it (a figure: called with
    the path), or an object written as JSON; the names in ``last`` (the sidecar) are moved in
    last. Returns the set (its ``names`` and ``dir``).
    """
    from retcon.output import OutputSet, write_json_atomic, write_text_atomic

    with OutputSet(folder, last=last) as out:
        for name, content in files.items():
            if callable(content):
                content(out / name)
            elif isinstance(content, str):
                write_text_atomic(out / name, content)
            else:
                write_json_atomic(out / name, content)
    return out


def wrote(files: Sequence[str], folder: str | os.PathLike) -> str:
    """The line a command prints after ``--out DIR``: ``wrote a.json, b.png to DIR``."""
    return f"wrote {', '.join(files)} to {folder}"


def emit(args, obj: Any, text: str | Callable[[], str] = "") -> None:
    """Print a command's result: with ``--json`` one JSON object (``obj``), else ``text``.

    ``text`` (or the function that makes it, called only without ``--json``) is written with
    one final newline; an empty text prints nothing.
    """
    if getattr(args, "json", False):
        print_json(obj)
        return
    body = text() if callable(text) else text
    if body:
        sys.stdout.write(body if body.endswith("\n") else body + "\n")


def enable_compile_cache() -> str | None:
    """Keep XLA's compiled kernels across runs: JAX's persistent compilation cache in the user cache
    directory (``retcon.cache.user_cache_dir() / "jax"``), unless the user chose a directory
    (``JAX_COMPILATION_CACHE_DIR``). Returns the directory, or ``None`` if it cannot be used."""

    import jax

    d = os.environ.get("JAX_COMPILATION_CACHE_DIR")
    if not d:
        from retcon.cache import user_cache_dir

        d = str(user_cache_dir() / "jax")
    try:
        Path(d).mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", d)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return d


def verbosity(args) -> int:
    """``-v`` count minus ``-q`` count (0 by default)."""
    return int(getattr(args, "verbose", 0) or 0) - int(getattr(args, "quiet", 0) or 0)


# The top-level packages whose module loggers (`logging.getLogger(__name__)`) the CLI shows.
_LOGGERS = ("retcon", "theory", "sim", "oas", "paper_checks", "experiments")


def configure_logging(level: int) -> None:
    """One stderr handler for the package loggers; INFO by default, WARNING with -q, DEBUG with -v."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for name in _LOGGERS:
        log = logging.getLogger(name)
        for h in list(log.handlers):
            if getattr(h, "_retcon_cli", False):
                log.removeHandler(h)
        handler._retcon_cli = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.setLevel(level)
        log.propagate = False


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stdout)
        return 2
    v = verbosity(args)
    from retcon.commands._progress import quiet_xla

    quiet_xla()  # before any command imports JAX: XLA's compile alarms are not failures
    configure_logging(logging.DEBUG if v > 0 else logging.WARNING if v < 0 else logging.INFO)
    sub = getattr(args, "pair_command", None) or getattr(args, "data_command", None)
    name = f"{parser.prog} {args.command}" + (f" {sub}" if sub else "")
    try:
        with cli_spelling():  # messages name options (--compress-ratio), not arguments
            status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except InputError as e:
        sys.stderr.write(f"{name}: error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{name}: interrupted; finished outputs and caches are kept.\n")
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): not an error of the run. Point stdout at
        # devnull so the interpreter's final flush does not raise again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except OSError as e:
        # The machine refused a read or write (disk full, permission, a folder where a file
        # should be...): one line naming the path and the OS error; -v logs the traceback.
        logging.getLogger("retcon").debug("OS error", exc_info=True)
        sys.stderr.write(f"{name}: error: {os_error_line(e)}\n")
        return 2


def os_error_line(e: OSError) -> str:
    """``'PATH': STRERROR [ENAME]`` for an ``OSError``, the words a user can act on."""
    import errno

    code = errno.errorcode.get(e.errno or 0, "")
    what = e.strerror or str(e) or type(e).__name__
    where = f"{str(e.filename)!r}: " if e.filename is not None else ""
    if e.filename2 is not None:
        where = f"{str(e.filename)!r} -> {str(e.filename2)!r}: "
    return f"{where}{what}" + (f" [{code}]" if code else "") + "."


if __name__ == "__main__":
    raise SystemExit(main())
