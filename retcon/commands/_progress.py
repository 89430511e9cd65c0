"""Progress on stderr for the command lines: the one helper every long command uses (issue 36).

What a long command shows by default, on stderr only (``--json`` on stdout is untouched):

  * ``announce``: one line as soon as the arguments are checked, before JAX or the data are
    loaded, saying what the command will do (``retcon stress: 2 x 3 conditions on locomo-like
    ...``), so a command that cannot know its length still says at once that it works;
  * ``bar``: a tqdm bar with an ETA, in the style of ``retcon pair locomo``'s (``desc`` the
    command, a unit that means something: ``q`` questions, ``claim``, ``stage``), fed by the
    optional callbacks of the library functions, which never print themselves;
  * ``quiet_xla``: XLA's own compile alarms (``E1201 ... slow_operation_alarm ... Very slow
    compile?``) are silenced for the command line before JAX is imported.

``-q`` (``verbosity(args) < 0``) silences all of it; ``-v`` adds the library's log lines.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

from retcon.commands.common import verbosity

# XLA's C++ log (tsl/absl): 0 all, 1 no INFO, 2 no WARNING, 3 no ERROR. The compile alarm
# ("Very slow compile? If you want to file a bug ...") is logged as an ERROR though the compile
# goes on and the results are right, so the command line keeps only fatal messages; a run that
# wants XLA's log sets the variable itself (it is then left alone).
XLA_LOG_LEVEL = "3"


def quiet_xla() -> None:
    """Silence XLA's log lines for this process unless the user set their level; call it before
    JAX is imported (it has no effect on a JAX already imported)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", XLA_LOG_LEVEL)


def enabled(args: Any) -> bool:
    """Whether the command shows progress: not with ``-q`` nor ``--no-progress``."""
    return verbosity(args) >= 0 and not getattr(args, "no_progress", False)


def command_name(args: Any) -> str:
    """``retcon stress``, ``retcon pair locomo``, ``retcon timeline identify``: the command run."""
    parts = ["retcon", str(getattr(args, "command", "") or "")]
    for attr in ("pair_command", "timeline_command", "data_command"):
        sub = getattr(args, attr, None)
        if sub:
            parts.append(str(sub))
    return " ".join(p for p in parts if p)


# Seconds an announcement waits for the command's first stage before it is shown anyway: the
# arguments' checks that read a file end well within it, so a refusal is one line.
GRACE_S = 0.5

_LOCK = threading.RLock()
_PENDING: dict[str, Any] = {}  # the announcement not shown: "line", "stream", "timer", "at"


def announce(args: Any, what: str, *, stream: TextIO | None = None) -> None:
    """Say ``retcon CMD: WHAT`` on stderr, unless progress is off.

    The line is shown at the command's first stage (its bar or stage line, or JAX starting to
    load) or ``GRACE_S`` seconds after this call, whichever comes first, and at the latest when
    the command ends
    (``settle``); a command that ends in an input error before then shows only the error
    (``retcon.cli`` calls ``drop``), so a refusal is one line even when a check follows this call.
    """
    if not enabled(args):
        return
    show()  # an earlier one first (a command announces once; a test may call twice)
    line = f"{command_name(args)}: {what}\n"
    if GRACE_S <= 0:  # at once (the tests set it so: a check after the announcement shows)
        _PENDING.update(line=line, stream=stream)
        show()
        return
    timer = threading.Timer(GRACE_S, show)
    timer.daemon = True
    with _LOCK:
        _PENDING.update(line=line, stream=stream, timer=timer, at=time.monotonic())
        if _BEFORE_JAX not in sys.meta_path:
            sys.meta_path.insert(0, _BEFORE_JAX)
    timer.start()


class _BeforeJax:
    """An import hook that shows the pending announcement when the heavy libraries start to load
    (JAX above all: the first stage of most commands, seconds long, during which the grace
    timer's thread may not get to run), or at any import once the grace is over; it finds
    nothing itself."""

    heavy = frozenset({"jax", "jaxlib", "scipy", "sklearn", "matplotlib"})

    def find_spec(self, name, path=None, target=None):
        if _PENDING and (
            name.partition(".")[0] in self.heavy
            or time.monotonic() - _PENDING.get("at", 0.0) > GRACE_S
        ):
            show()


_BEFORE_JAX = _BeforeJax()


def _unhook() -> None:
    try:
        sys.meta_path.remove(_BEFORE_JAX)
    except ValueError:
        pass


def show() -> None:
    """Write the pending announcement now (flushed); nothing if none is pending."""
    with _LOCK:
        _unhook()
        line, stream, timer = (_PENDING.pop(k, None) for k in ("line", "stream", "timer"))
        _PENDING.clear()
        if timer is not None and timer is not threading.current_thread():
            timer.cancel()
        if line is not None:
            out = stream if stream is not None else sys.stderr
            out.write(line)
            out.flush()


def drop() -> bool:
    """Forget the pending announcement (the command was refused before its first stage); returns
    whether one was pending."""
    with _LOCK:
        _unhook()
        line, timer = _PENDING.pop("line", None), _PENDING.pop("timer", None)
        _PENDING.clear()
        if timer is not None:
            timer.cancel()
    return line is not None


class _Counts:
    """The counts of a bar that draws no frames (stderr is a file or a pipe): ``n``, ``total``."""

    def __init__(self, total: int | None):
        self.n, self.total, self.note = 0, total, ""

    def update(self, k: int) -> None:
        self.n += k

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.note = text  # the last one closes the line (an LLM run's counters)


class Bar:
    """A tqdm bar on stderr, or nothing when progress is off; made on first use.

    ``update(done, total)`` is the callback shape the library functions take (``done`` of
    ``total`` units finished); ``note(text)`` sets the text after the bar (the current stage).
    Use it as a context manager so the bar is closed on every exit. On a terminal the bar redraws
    itself with ``\r``; into a file or a pipe (a log) it draws no frames: the stage lines, then one
    line with its counts when it closes.
    """

    def __init__(self, args: Any, desc: str, unit: str):
        self._on = enabled(args)
        self._desc, self._unit = desc, unit
        self._bar: Any = None
        self._finished = False  # closed: later updates draw no second bar
        self._t0 = time.monotonic()

    def _make(self, total: int | None) -> Any:
        if self._bar is None and self._on and not self._finished:
            show()  # the announcement comes before the first stage
            if _isatty(sys.stderr):
                from tqdm import tqdm

                self._bar = tqdm(total=total, desc=self._desc, unit=self._unit, file=sys.stderr)
            else:
                self._bar = _Counts(total)
        return self._bar

    def update(self, done: int, total: int | None = None) -> None:
        bar = self._make(total)
        if bar is None:
            return
        if total is not None and bar.total != total:
            bar.total = total
        bar.update(max(0, int(done) - bar.n))
        if total is not None and done >= total:  # finished: the ETA and rate stop here
            self.close()

    def note(self, text: str) -> None:
        bar = self._make(None)
        if bar is not None:
            bar.set_postfix_str(text, refresh=True)

    def write(self, line: str) -> None:
        """Print one line on stderr above the bar (or alone when no bar is open yet)."""
        if not self._on:
            return
        show()
        if self._bar is not None and not isinstance(self._bar, _Counts):
            self._bar.write(line, file=sys.stderr)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def close(self) -> None:
        bar, self._bar = self._bar, None
        if isinstance(bar, _Counts):
            if bar.n:
                of = f"/{bar.total}" if bar.total else ""
                took = time.monotonic() - self._t0
                note = f" ({bar.note})" if bar.note else ""
                sys.stderr.write(f"{self._desc}: {bar.n}{of} {self._unit} in {took:.1f} s{note}\n")
                sys.stderr.flush()
        elif bar is not None:
            bar.close()
        self._finished = True

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def bar(args: Any, *, unit: str, desc: str | None = None) -> Bar:
    """A ``Bar`` for this command: ``desc`` defaults to the command's name without ``retcon``."""
    return Bar(args, desc or command_name(args).removeprefix("retcon "), unit)
