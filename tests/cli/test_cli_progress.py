"""Progress by default (issue 36 item 1): every long command says on stderr, within 2 seconds of
its start and without ``-v``, what it is doing; ``-q`` silences it and stdout stays the same.

Each command runs in a subprocess on a tiny input; its stderr is read line by line with the time
of each line since the process was started, and the process is stopped at its first progress
line (the whole command's wall time is never asserted). The cheapest commands are in the fast
tier, the rest in the slow tier.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path

import pytest

from retcon.cli import main
from retcon.commands import _progress
from tests._cli import error_lines
from tests._data import LOCOMO_PATH, needs_locomo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WITHIN_S = 2.0


def stderr_until_progress(argv: list[str], tmp_path: Path, *, limit_s: float = 120.0):
    """``[(seconds since start, line), ...]`` of ``retcon argv``'s stderr up to and including its
    first progress line (``retcon <command>: ...``), then the process is stopped."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "retcon", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    lines: list[tuple[float, str]] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.monotonic() - t0, line.rstrip("\n")))
            if line.startswith("retcon ") or time.monotonic() - t0 > limit_s:
                break
    finally:
        proc.kill()
        proc.wait()
    return lines


def start_up_seconds() -> float:
    """Seconds the interpreter takes, now, to import numpy and build the CLI's parser: the floor
    under any command's first line (about 0.5 s on an idle machine)."""
    code = "import numpy, retcon.cli; retcon.cli.build_parser()"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.monotonic() - t0


def check_progress(argv: list[str], tmp_path: Path, words: tuple[str, ...]) -> None:
    """The first stderr line is the command's progress line, within ``WITHIN_S`` of the start.

    On a machine shared by many jobs the start-up alone (numpy's import) can take longer than
    that, so the allowance is the larger of ``WITHIN_S`` and twice the start-up measured just
    before (the line must come before JAX, the data and the compile, whatever the load); the run
    is tried up to three times and the fastest counts.
    """
    within = WITHIN_S
    for _ in range(3):
        within = max(WITHIN_S, 2 * start_up_seconds())
        lines = stderr_until_progress(argv, tmp_path)
        assert lines, f"retcon {' '.join(argv)} printed nothing on stderr"
        if lines[-1][0] < within:
            break
    at, first = lines[-1]
    command = " ".join(a for a in argv if not a.startswith("-"))
    assert first.startswith("retcon "), lines  # no line of XLA's or a traceback before it
    assert at < within, f"first progress line after {at:.2f} s (allowed {within:.2f} s): {first!r}"
    assert all(w in first for w in words), (first, command)


@pytest.fixture(scope="module")
def paired(tmp_path_factory) -> Path:
    """A small paired file of 12 groups (``pair simulate``), shared by the module's tests."""
    out = tmp_path_factory.mktemp("paired") / "paired.jsonl"
    argv = ["-q", "pair", "simulate", "--instances", "700", "--groups", "12", "--output"]
    assert main([*argv, str(out)]) == 0
    return out


FAST = [
    (["stress", "--memories", "16", "--memory-size", "4"], ("spillover conditions",)),
    (["pair", "simulate", "--instances", "50", "--output", "p.jsonl"], ("50 paired instances",)),
    (["timeline", "simulate", "--queries", "64"], ("the stream",)),
    (["paper-checks", "--sim-only"], ("simulations only",)),
    (
        ["pair", "locomo", "--data", str(FIXTURES / "locomo_tiny.json"), "--output", "p.jsonl"],
        ("pairing every question", "bar of questions"),
    ),
]


@pytest.mark.parametrize(("argv", "words"), FAST, ids=[" ".join(a[:2]) for a, _ in FAST])
def test_progress_line_within_two_seconds(argv, words, tmp_path):
    check_progress(argv, tmp_path, words)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["fit", "--data", "{paired}", "--router-out", "r.json"], ("fold grouped",)),
        (["evaluate", "--data", "{paired}", "--resamples", "20"], ("5-fold ridge fit",)),
        (["identify", "--data", "{paired}", "--resamples", "2"], ("bootstrap refits",)),
        (
            [
                "pair",
                "longmemeval",
                "--data",
                str(FIXTURES / "longmemeval_tiny.json"),
                "--operators",
                "extractive",
                "--output",
                "p.jsonl",
                "--limit",
                "4",
            ],
            ("spread over the conversations",),
        ),
        (["paper-checks", "--data", str(LOCOMO_PATH)], ("the claims on LoCoMo",)),
    ],
    ids=["fit", "evaluate", "identify", "pair longmemeval", "paper-checks data"],
)
def test_progress_line_within_two_seconds_slow(argv, words, tmp_path, request):
    if "{paired}" in argv:
        path = request.getfixturevalue("paired")
        argv = [str(path) if a == "{paired}" else a for a in argv]
    if str(LOCOMO_PATH) in argv and not LOCOMO_PATH.is_file():
        pytest.skip(f"LoCoMo not found ({LOCOMO_PATH})")
    check_progress(argv, tmp_path, words)


@pytest.mark.slow
@needs_locomo
@pytest.mark.parametrize(
    ("form", "words"), [("locomo", ("as a stream",)), ("identify", ("leaving one conversation",))]
)
def test_timeline_locomo_progress_slow(form, words, tmp_path):
    check_progress(["timeline", form, "--data", str(LOCOMO_PATH)], tmp_path, words)


@pytest.mark.slow
def test_quiet_silences_progress_and_stdout_is_the_same(tmp_path, capsys):
    """``-q``: nothing on stderr; without it the progress line; ``--json`` on stdout alike."""
    base = ["pair", "simulate", "--instances", "40", "--json", "--seed", "5"]
    outs = {}
    for flag in ("-q", None):
        out = tmp_path / f"{flag or 'loud'}.jsonl"
        assert main(([flag] if flag else []) + [*base, "--output", str(out)]) == 0
        got = capsys.readouterr()
        outs[flag] = (json.loads(got.out), got.err, out.read_bytes())
    (quiet_json, quiet_err, quiet_rows), (loud_json, loud_err, loud_rows) = outs.values()
    assert quiet_err == ""
    assert loud_err.startswith("retcon pair simulate: 40 paired instances")
    assert quiet_rows == loud_rows
    assert {**quiet_json, "output": ""} == {**loud_json, "output": ""}


@pytest.mark.slow
def test_no_structure_leaves_the_column_out(tmp_path, capsys):
    """``pair simulate --no-structure``: the same rows without evidence_structure."""
    full, lean = tmp_path / "full.jsonl", tmp_path / "lean.jsonl"
    base = ["-q", "pair", "simulate", "--instances", "30", "--seed", "2"]
    assert main([*base, "--output", str(full)]) == 0
    assert main([*base, "--output", str(lean), "--no-structure"]) == 0
    rows_full = [json.loads(x) for x in full.read_text().splitlines()]
    rows_lean = [json.loads(x) for x in lean.read_text().splitlines()]
    assert all("evidence_structure" in r for r in rows_full)
    assert [{k: v for k, v in r.items() if k != "evidence_structure"} for r in rows_full] == (
        rows_lean
    )
    assert main(["identify", "--data", str(lean)]) == 2
    (err,) = error_lines(capsys.readouterr().err)
    assert "'evidence_structure'" in err and "--no-structure" in err


def test_helpers_follow_quiet_and_verbose(capsys):
    """``announce`` and ``Bar`` print on stderr by default and with ``-v``, nothing with ``-q``
    or ``--no-progress``; never on stdout."""
    for verbose, quiet, no_progress, shown in (
        (0, 0, False, True),
        (1, 0, False, True),
        (0, 1, False, False),
        (0, 0, True, False),
    ):
        args = Namespace(
            command="pair",
            pair_command="locomo",
            verbose=verbose,
            quiet=quiet,
            no_progress=no_progress,
        )
        _progress.announce(args, "working")
        with _progress.bar(args, unit="q") as b:
            b.write("a stage")
            b.update(1, 2)
            b.note("claim 1")
            b.update(2, 2)
        out, err = capsys.readouterr()
        assert out == ""
        if shown:
            assert err.startswith("retcon pair locomo: working\na stage\n")
            # stderr is not a terminal here: no frames, one closing line with the counts
            assert "\npair locomo: 2/2 q in " in err and "\r" not in err
        else:
            assert err == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_draws_frames_only_on_a_terminal(monkeypatch):
    """Issue 48 item 4: with stderr a file or a pipe no ``\r`` reaches it (a log of a failed run
    held bar fragments before its error); on a terminal the tqdm bar draws as before."""
    args = Namespace(command="pair", pair_command="locomo", verbose=0, quiet=0)
    for stream, frames in ((io.StringIO(), False), (_Terminal(), True)):
        monkeypatch.setattr(sys, "stderr", stream)
        with _progress.bar(args, unit="q") as b:
            b.update(1, 3)
            b.note("stage 2")
            b.write("a stage line")
            b.update(3, 3)
        err = stream.getvalue()
        assert ("\r" in err) is frames, err
        assert "a stage line\n" in err
        if frames:
            assert "3/3" in err and ("q/s" in err or "s/q" in err)
        else:
            assert err.endswith("\npair locomo: 3/3 q in 0.0 s (stage 2)\n"), err


def test_an_announcement_waits_for_the_first_stage_and_a_refusal_drops_it(capsys, monkeypatch):
    """Issue 48 item 4: the announcement is shown at the first stage (or after its grace), and a
    command refused before then prints only its error line."""
    from retcon.errors import InputError

    args = Namespace(command="stress", verbose=0, quiet=0)
    monkeypatch.setattr(_progress, "GRACE_S", 60.0)
    _progress.announce(args, "9 conditions")
    assert capsys.readouterr().err == ""  # pending
    with _progress.bar(args, unit="stage") as b:
        b.write("first stage")
    assert capsys.readouterr().err.startswith("retcon stress: 9 conditions\nfirst stage\n")

    def refused(a):
        _progress.announce(a, "9 conditions")
        raise InputError("--budgets: expected distinct budgets; got 64 twice.")

    monkeypatch.setattr("retcon.commands.sim.run_stress", refused)  # bound when main builds
    rc = main(["stress"])
    err = capsys.readouterr().err
    assert rc == 2 and err.splitlines() == [
        "retcon stress: error: --budgets: expected distinct budgets; got 64 twice."
    ]
    monkeypatch.setattr(_progress, "GRACE_S", 0.05)
    _progress.announce(args, "shown after its grace")
    time.sleep(0.5)
    assert capsys.readouterr().err == "retcon stress: shown after its grace\n"


def test_xla_log_level_set_for_the_cli_only(monkeypatch):
    """The CLI silences XLA's compile alarms before JAX is imported, unless the user set it."""
    from retcon.commands._progress import XLA_LOG_LEVEL, quiet_xla

    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    quiet_xla()
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == XLA_LOG_LEVEL
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    quiet_xla()
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "0"
