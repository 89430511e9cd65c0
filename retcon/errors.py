"""The one error type for bad input, so the CLI can tell it from a bug.

Every validator in the package raises ``InputError`` (a ``ValueError``) with one line that names
the function, option, file, row or field, what was expected and what came, e.g.
``ScenarioConfig.compress_ratio must be in (0, 1); got 1.3.`` The CLI prints that line and exits
with status 2; anything else is a bug and keeps its traceback.
"""

import argparse
import json
import math
import numbers
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path


class InputError(ValueError):
    """Bad input from a user: a one-line message naming where, what was expected, and what came."""


#: True while a command line runs (`cli_spelling`): messages then name options, not arguments.
_CLI_SPELLING: ContextVar[bool] = ContextVar("retcon_cli_spelling", default=False)


@contextmanager
def cli_spelling() -> Iterator[None]:
    """Within this block every `Spell` names CLI options (``--compress-ratio``).

    ``retcon.cli.main`` runs each command inside it; Python callers never need it.
    """
    token = _CLI_SPELLING.set(True)
    try:
        yield
    finally:
        _CLI_SPELLING.reset(token)


class Spell:
    """How the error messages of one function name its arguments: the way the caller wrote them.

    Called from Python, a message starts with the function and names the argument as Python does,
    as oas's messages do: ``crossover: compress_ratio must be in (0, 1); got 1.3.`` (a class's
    field as an attribute: ``PairJob.reader must be one of ...``). While a
    command line runs (`cli_spelling`), the same check names the option instead:
    ``--compress-ratio must be in (0, 1); got 1.3.``

    Args:
      func: the public function or class whose arguments are checked (``"make_length_dist"``,
        ``"PairJob"``).
      py: arguments whose Python name differs from the key the check uses (``{"dist": "name"}``).
      cli: arguments whose option is not ``--`` plus the name with dashes (``{"out": "--output"}``).
    """

    def __init__(
        self,
        func: str,
        *,
        py: Mapping[str, str] | None = None,
        cli: Mapping[str, str] | None = None,
    ) -> None:
        self.func = func
        self.py = dict(py or {})
        self.cli = dict(cli or {})

    def __call__(self, arg: str) -> str:
        """The argument inside a message: ``compress_ratio``, or ``--compress-ratio`` in the CLI."""
        if _CLI_SPELLING.get():
            return self.cli.get(arg) or "--" + arg.replace("_", "-")
        return self.py.get(arg, arg)

    def lead(self, arg: str) -> str:
        """The argument opening a message: ``crossover: compress_ratio``, or ``--compress-ratio``."""
        if _CLI_SPELLING.get():
            return self(arg)
        # A class's field reads as an attribute (``PairJob.reader``), as sim's configs write it.
        return f"{self.func}{'.' if self.func[:1].isupper() else ': '}{self(arg)}"

    def given(self, arg: str, value: object) -> str:
        """An argument with its value inside a message: ``name='gamma'``, or ``--dist gamma``."""
        return f"{self(arg)} {value}" if _CLI_SPELLING.get() else f"{self(arg)}={value!r}"

    def __repr__(self) -> str:
        return f"Spell({self.func!r})"


def check_range(
    name: str,
    value: float,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = True,
    high_open: bool = True,
) -> float:
    """Return ``float(value)`` or raise ``InputError`` naming ``name``, the range and the value.

    Args:
      name: how the user knows the quantity (``--compress-ratio``, ``ScenarioConfig.budget``).
      value: the given value.
      low, high: bounds; ``None`` means unbounded on that side.
      low_open, high_open: whether the bound itself is excluded.
    """
    lo_br = "(" if (low is None or low_open) else "["
    hi_br = ")" if (high is None or high_open) else "]"
    rng = f"{lo_br}{'-inf' if low is None else _fmt(low)}, {'inf' if high is None else _fmt(high)}{hi_br}"
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in {rng}; got {value!r}.") from None
    bad = math.isnan(x)
    if low is not None:
        bad |= x <= low if low_open else x < low
    if high is not None:
        bad |= x >= high if high_open else x > high
    if bad:
        raise InputError(f"{name} must be in {rng}; got {_fmt(value)}.")
    return x


def check_integer(name: str, value, low: int, high: int, *, unit: str = "") -> int:
    """Return ``value`` when it is an integer (not a bool) in ``[low, high]``; else ``InputError``
    naming ``name``, the range (followed by ``unit``, e.g. ``" (units retrieved)"``) and the value.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{name} must be an integer in [{low}, {high}]{unit}; got {value!r}.")
    return value


def check_at_least(name: str, value, low: int) -> int:
    """Return ``int(value)`` when it is an integer (not a bool; numpy's count) of at least ``low``;
    else ``InputError`` naming ``name``, the bound and the value
    (``--folds must be an integer >= 2; got 1.``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InputError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def check_choice(name: str, value, choices):
    """Return ``value`` when it is one of ``choices``; else ``InputError`` naming ``name``.

    Args:
      name: how the user knows the setting (``--reader``, ``retriever.order``, ``variant``).
      value: the given value.
      choices: the allowed values, listed in the message in their order.
    """
    options = list(choices)
    try:
        ok = value in options
    except TypeError:
        ok = False
    if not ok:
        got = repr(value) if isinstance(value, str) else f"{type(value).__name__} ({value!r})"
        raise InputError(f"{name} must be one of {options}; got {got}.")
    return value


def _fmt(v) -> str:
    return repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)


def memory_limit() -> int:
    """Bytes one run may plan to hold: half the machine's physical memory (``$RETCON_MEMORY_LIMIT``
    in bytes overrides it)."""

    env = os.environ.get("RETCON_MEMORY_LIMIT")
    if env:
        try:
            return int(float(env))
        except ValueError:
            raise InputError(
                f"$RETCON_MEMORY_LIMIT must be a number of bytes; got {env!r}."
            ) from None
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def check_memory(what: str, needed_bytes: float, *, fix: str = "") -> None:
    """Refuse a size that cannot fit, before allocating: name it, the estimate and the limit.

    Args:
      what: the option and value, as the user wrote them (``--resamples 100000000``).
      needed_bytes: the estimated peak memory of the request.
      fix: what to do instead (``use at most 800000 resamples``).
    """
    limit = memory_limit()
    if not needed_bytes <= limit:  # also refuses NaN
        raise InputError(
            f"{what} needs about {_bytes(needed_bytes)} of memory; the limit here is "
            f"{_bytes(limit)} (half the machine's memory, or $RETCON_MEMORY_LIMIT)"
            + (f"; {fix}." if fix else ".")
        )


def _bytes(n: float) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"


def decode_utf8(data: bytes, source: str, first_line: int = 1) -> str:
    """``data.decode("utf-8")``, or ``InputError`` naming ``source``, the line and the bad byte.

    Args:
      data: the bytes; source: the file as the user knows it; first_line: the line ``data``
        starts on.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + first_line
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(
            f"{source}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x} at column {col}); "
            f"save the file as UTF-8."
        ) from None


def read_text(path, what: str = "file") -> str:
    """The UTF-8 text of ``path``; ``InputError`` for a missing file, a folder or non-UTF-8 bytes."""

    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p}: is a folder; expected a {what}.")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file (expected a {what}).") from None
    except OSError as e:
        raise InputError(f"{p}: cannot read the {what} ({e.strerror}).") from None
    return decode_utf8(data, str(p))


def parse_json(text: str, where: str, *, lines: bool = True, hint: str = ""):
    """``json.loads(text)``, or an ``InputError`` naming ``where`` for text that is not JSON (the
    parser's message and position) or is nested too deeply for Python's parser.

    Args:
      text: the JSON text.
      where: the file or ``file:line`` the text came from, first in the message.
      lines: give the position as line and column (a file); False: column only (one row).
      hint: appended to the nesting message (``"; a row is one flat object"``).
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        at = f"line {e.lineno}, column {e.colno}" if lines else f"column {e.colno}"
        raise InputError(f"{where}: not valid JSON ({e.msg} at {at}).") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply{hint}.") from None


# Largest seed: JAX keys (without x64) keep 32 bits of the seed, so larger ones would collide.
SEED_LIMIT = 2**32


def seed_type(text: str) -> int:
    """argparse type of ``--seed``: an integer in [0, 2**32) (shared by every command line)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer in [0, 2**32); got {text!r}"
        ) from None
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**32); got {text}")
    return value


@contextmanager
def worded_for(where: str, words: dict[str, str]) -> Iterator[None]:
    """Re-word, for a user, an ``InputError`` that library code spelled for Python callers.

    A message that starts with one of ``words``' keys (a function or class name, e.g.
    ``"Router."`` or ``"cross_fit_types: "``) is raised again as ``"{where}: {words[key]}{rest}"``:
    the file or option the user gave, then what went wrong in their terms. Other errors pass
    unchanged.

    Example::

        with worded_for(f"--data {path}", {"Router.": "the router fitted on it: "}):
            router = fit_router(key, data)
    """
    try:
        yield
    except InputError as e:
        msg = str(e)
        for prefix, phrase in words.items():
            if msg.startswith(prefix):
                raise InputError(f"{where}: {phrase}{msg[len(prefix) :]}") from None
        raise
