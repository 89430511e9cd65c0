"""The plumbing every command line shares: common options, list parsing, output and emit helpers.

The command modules of ``retcon.commands`` build their parsers and print their results with these;
``retcon.cli`` (the dispatcher, on top) registers the command modules and runs one. This module
imports neither, so every arrow inside the CLI runs down: ``retcon.cli`` -> a command module ->
this module -> the base modules of ``retcon`` (docs/architecture.md).

The conventions these helpers carry are stated once in ``retcon.cli``'s docstring.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from retcon.errors import seed_type


def add_verbosity(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
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
    add_verbosity(parser)


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


#: The arguments of the command being run, as typed (``retcon.cli.main`` records them).
ARGV: list[str] = []


def command_line() -> str:
    """The whole command line being run, quoted for a shell (``retcon paper-checks --out d``):
    the provenance that says how to make the outputs again."""
    import shlex

    return shlex.join(["retcon", *ARGV])
