"""Hostile input: a full disk under ``--out DIR`` and ``--output FILE`` (issue 48 item 4).

Contract (as ``tests/cli/test_hostile_input.py``): exit 2, exactly one line on stderr naming the
option, the folder, the free bytes and the minimum needed; no traceback; nothing on stdout;
nothing partial left. The free space is checked with the other output checks
(``retcon.output.check_free_space`` from ``check_out_dir`` / ``check_out_file``), before the
command's announcement; a disk that fills during the work still ends in one line naming the
option and the path (``retcon.cli._option_of``).

The real cases mount a 64 KiB tmpfs and fill it; they need root (``mount``) and are skipped,
with the reason, where it is not permitted.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from retcon.errors import InputError
from retcon.output import MIN_FREE_BYTES, check_free_space, check_out_dir, check_out_file
from tests._cli import error_lines
from tests._cli import run_cli as _run

FIX = Path(__file__).resolve().parents[1] / "fixtures"


class _Statvfs(NamedTuple):
    f_bavail: int
    f_frsize: int


def _statvfs(bavail: int, frsize: int = 4096):
    seen: list[str] = []

    def statvfs(path):
        seen.append(os.fspath(path))
        return _Statvfs(bavail, frsize)

    return statvfs, seen


def test_check_free_space_refuses_a_target_with_too_little_room(tmp_path, monkeypatch):
    """The free bytes are ``f_bavail * f_frsize`` of the target's folder (or its nearest existing
    one); below the minimum the line names the option, the folder, both sizes."""
    statvfs, seen = _statvfs(bavail=3, frsize=4096)  # 12,288 bytes free
    monkeypatch.setattr(os, "statvfs", statvfs)
    with pytest.raises(InputError) as e:
        check_out_dir("--out", tmp_path / "a" / "b")
    line = str(e.value)
    assert "\n" not in line
    assert line.startswith(f"--out {str(tmp_path / 'a' / 'b')!r}: only 12,288 bytes (12.0 KiB)")
    assert f"free in {str(tmp_path)!r}" in line
    assert f"at least {MIN_FREE_BYTES:,} bytes (1.0 MiB)" in line
    assert seen[-1] == str(tmp_path)  # the nearest existing folder, not the absent target
    assert not (tmp_path / "a").exists()

    with pytest.raises(InputError, match=r"^--output .*p\.jsonl'.* at least 5,000,000 bytes"):
        check_out_file("--output", tmp_path / "p.jsonl", min_free=5_000_000)
    assert seen[-1] == str(tmp_path)
    with pytest.raises(InputError, match=r"^--out .*: only 12,288 bytes"):
        check_out_dir("--out", tmp_path)  # an existing folder: its own file system
    assert seen[-1] == str(tmp_path)


def test_check_free_space_passes_room_enough_and_an_unknown_file_system(tmp_path, monkeypatch):
    statvfs, _ = _statvfs(bavail=MIN_FREE_BYTES // 4096, frsize=4096)  # exactly the floor
    monkeypatch.setattr(os, "statvfs", statvfs)
    assert check_free_space("--out", tmp_path) == MIN_FREE_BYTES
    assert check_out_file("--output", tmp_path / "p.jsonl") == tmp_path / "p.jsonl"
    with pytest.raises(InputError, match="needs at least 1,048,577 bytes"):
        check_free_space("--out", tmp_path, MIN_FREE_BYTES + 1)

    def broken(path):
        raise OSError(errno.ENOSYS, "Function not implemented", os.fspath(path))

    monkeypatch.setattr(os, "statvfs", broken)  # cannot tell: the write path says it if full
    assert check_free_space("--out", tmp_path, 1 << 60) is None


def test_pair_simulate_needs_its_estimated_size(tmp_path, capsys, monkeypatch):
    """``pair simulate`` asks for about 2 KiB a row (its measured size), refused before JAX."""
    statvfs, _ = _statvfs(bavail=1000, frsize=4096)  # 4,096,000 bytes: 2,000 rows, not 3,000
    monkeypatch.setattr(os, "statvfs", statvfs)
    out = tmp_path / "p.jsonl"
    rc, stdout, err = _run(
        ["pair", "simulate", "--instances", "3000", "--output", str(out)], capsys
    )
    assert rc == 2 and stdout == "" and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "--output" in lines[0] and "4,096,000 bytes" in lines[0], lines[0]
    assert f"at least {3000 * 2048:,} bytes" in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == []


def _fill(folder: Path) -> None:
    """Write into ``folder`` until its file system refuses (ENOSPC)."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as e:
        assert e.errno == errno.ENOSPC, e
    finally:
        os.close(fd)
    assert os.statvfs(folder).f_bavail == 0


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs at ``tmp_path/full``, filled up; unmounted afterwards."""
    d = tmp_path / "full"
    d.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the full-disk cases run in CI as root")
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(d)],
            check=True,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError) as e:
        why = getattr(e, "stderr", None) or str(e)
        pytest.skip(f"mount -t tmpfs is not permitted here: {why.strip()}")
    try:
        _fill(d)
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=False, capture_output=True)


CASES = {
    "crossover --out": (["crossover", "--budgets", "100,200", "--out", "{d}/x"], "--out", "x"),
    "pair simulate --output": (
        ["pair", "simulate", "--instances", "40", "--output", "{d}/p.jsonl"],
        "--output",
        "p.jsonl",
    ),
    "pair locomo --output": (
        ["pair", "locomo", "--data", str(FIX / "locomo_tiny.json"), "--output", "{d}/p.jsonl"],
        "--output",
        "p.jsonl",
    ),
}


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "filler")


@pytest.mark.parametrize("case", list(CASES))
def test_full_disk_is_refused_before_the_work(full_disk, capsys, case):
    """A really full file system: exit 2 and one stderr line (no announcement before it) naming
    the option, the folder, 0 bytes free and the minimum; nothing made under the target."""
    argv, option, name = CASES[case]
    rc, stdout, err = _run([a.format(d=full_disk) for a in argv], capsys)
    assert rc == 2 and stdout == "" and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert f"error: {option} {str(full_disk / name)!r}: only 0 bytes free in " in line, line
    assert repr(str(full_disk)) in line and "needs at least" in line, line
    assert _left(full_disk) == []


@pytest.mark.parametrize("case", ["crossover --out", "pair locomo --output"])
def test_disk_filling_during_the_work_is_one_line(full_disk, capsys, monkeypatch, case):
    """The disk fills after the checks (here: the check is skipped on a full disk): the real
    ENOSPC of the write ends in one line naming the option and the path, no traceback, and
    nothing partial (no staging folder, no temporary file, no file under the final name)."""
    import retcon.output

    monkeypatch.setattr(retcon.output, "check_free_space", lambda *a, **k: None)
    argv, option, name = CASES[case]
    rc, stdout, err = _run([a.format(d=full_disk) for a in argv], capsys)
    assert rc == 2 and stdout == "" and "Traceback" not in err, err
    lines = error_lines(err)
    assert len(lines) == 1, err
    assert f"error: {option} " in lines[0] and "[ENOSPC]" in lines[0], lines[0]
    assert repr(str(full_disk / name)) in lines[0], lines[0]
    left = _left(full_disk)
    assert left in ([], ["x"]), left  # --out's folder may be made, empty
    if left:
        assert list((full_disk / "x").iterdir()) == []
