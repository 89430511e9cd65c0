"""What the command-line analyses of ``experiments/`` share (``paper_checks.studies.scripts``): their
list options, their LoCoMo file and the JSON they write."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from retcon.errors import InputError


def numbers(option: str, text: str, kind: type = float) -> tuple:
    """``"1,0.5"`` as a tuple of ``kind``; ``kind=int`` asks for positive integers.

    Raises:
      InputError: naming ``option``, what it takes and ``text``.
    """
    try:
        vals = tuple(kind(x) for x in text.split(","))
    except ValueError:
        vals = ()
    if kind is int and (not vals or min(vals) < 1):
        raise InputError(f"{option} must be comma-separated positive integers; got {text!r}.")
    if not vals:
        raise InputError(f"{option} must be comma-separated numbers; got {text!r}.")
    return vals


def locomo_file(data: str | None) -> str:
    """``--data``, else ``$RETCON_DATA_DIR/locomo10.json`` (``./locomo10.json`` without it)."""
    return data or str(Path(os.environ.get("RETCON_DATA_DIR", ".")) / "locomo10.json")


def write_results(name: str, args: argparse.Namespace, out, data, text: str, *, seed) -> None:
    """A script's ``OUT/<name>.json`` (sidecar of ``args`` with ``data``), then ``text`` on
    stdout: the last step of the scripts that take their options on the command line."""
    from retcon.output import sidecar, write_json_atomic

    meta = sidecar(vars(args), seed=seed, command=f"python -m experiments.{name}")
    meta["data"] = data
    write_json_atomic(Path(out) / f"{name}.json", meta)
    sys.stdout.write(text)
