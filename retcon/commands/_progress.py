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
from typing import Any, TextIO

from retcon.commands._common import verbosity

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


def announce(args: Any, what: str, *, stream: TextIO | None = None) -> None:
    """Print ``retcon CMD: WHAT`` on stderr at once (flushed), unless progress is off."""
    if not enabled(args):
        return
    out = stream if stream is not None else sys.stderr
    out.write(f"{command_name(args)}: {what}\n")
    out.flush()


class Bar:
    """A tqdm bar on stderr, or nothing when progress is off; made on first use.

    ``update(done, total)`` is the callback shape the library functions take (``done`` of
    ``total`` units finished); ``note(text)`` sets the text after the bar (the current stage).
    Use it as a context manager so the bar is closed on every exit.
    """

    def __init__(self, args: Any, desc: str, unit: str):
        self._on = enabled(args)
        self._desc, self._unit = desc, unit
        self._bar: Any = None
        self._finished = False  # closed: later updates draw no second bar

    def _make(self, total: int | None) -> Any:
        if self._bar is None and self._on and not self._finished:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=self._desc, unit=self._unit, file=sys.stderr)
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
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._finished = True

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def bar(args: Any, *, unit: str, desc: str | None = None) -> Bar:
    """A ``Bar`` for this command: ``desc`` defaults to the command's name without ``retcon``."""
    return Bar(args, desc or command_name(args).removeprefix("retcon "), unit)
