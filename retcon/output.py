"""Atomic output, output-target checks and run sidecars: nothing half-written under a final name.

Conventions shared by every command:
  * ``--out DIR`` is always a directory; a command that writes one file names that option for it
    (``--output FILE``, ``--router-out FILE``, ``--decisions FILE``).
  * ``check_out_dir`` / ``check_out_file`` validate an output target before any work: a file where
    a folder is expected (or the reverse), a path under a file, an unwritable location, or an
    output that is also an input all raise ``InputError`` naming the option, and so does a file
    system with less free space than the run needs (``check_free_space``: the command's estimate,
    else ``MIN_FREE_BYTES``), so a full disk is one line before the work, not an error after it.
  * ``OutputSet`` stages a run's files in a hidden folder inside ``DIR`` and moves them in only when
    every file is written, the sidecar last, so a killed run never leaves a mixed set.
  * JSON is strict: NaN and infinities become ``null`` (the object says why in a ``status`` field),
    through ``to_jsonable``, which ``write_json_atomic`` and the CLI's ``--json`` printer share.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import platform
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from retcon.errors import InputError

# Hidden names this module creates; a rerun removes those whose process is gone.
_TMP_SUFFIX = ".tmp"
_STAGING_PREFIX = ".retcon-staging-"
_TMP_MARK = ".retcon-"


def atomic_write(
    path: str | os.PathLike, write: Callable[[Any], None], *, binary: bool = False
) -> Path:
    """Write ``path`` through ``write(fileobj)`` into a temporary sibling, then rename it over.

    A crash mid-write leaves the old file (or none) in place, never a truncated one. The temporary
    name carries the process id, so a later run can tell a stale one from a live one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}{_TMP_MARK}{os.getpid()}.", suffix=_TMP_SUFFIX, dir=path.parent
    )
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError):  # name the target, not the hidden temporary file
            raise OSError(e.errno, e.strerror or str(e), str(path)) from e
        raise
    return path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return atomic_write(path, lambda f: f.write(text))


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    """Strict JSON (``to_jsonable``: NaN and infinities as ``null``), written atomically."""
    return write_text_atomic(path, dumps(obj, indent=2) + "\n")


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` of ``to_jsonable(obj)``: strict JSON, no NaN or Infinity tokens."""
    return json.dumps(to_jsonable(obj), allow_nan=False, **kwargs)


def sidecar(config: Any, *, seed: int | None, command: str, **extra: Any) -> dict:
    """The provenance every written result carries: config, seed, package and library versions."""
    import jax
    import numpy

    from retcon import __version__

    return {
        "command": command,
        "config": config,
        "seed": seed,
        "retcon_version": __version__,
        "jax_version": jax.__version__,
        "numpy_version": numpy.__version__,
        "python": platform.python_version(),
        **extra,
    }


def _json_default(o: Any) -> Any:
    import numpy as np

    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return dataclasses.asdict(o)
    as_dict = getattr(o, "_asdict", None)  # NamedTuple
    if callable(as_dict):
        return as_dict()
    if isinstance(o, (np.ndarray,)) or type(o).__module__.startswith("jax"):
        return np.asarray(o).tolist()
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def to_jsonable(obj: Any) -> Any:
    """Plain JSON values: arrays, NamedTuples and dataclasses converted; NaN and +-inf -> ``None``.

    The one policy for non-finite numbers: ``null`` in JSON, with the reason in the object's
    ``status`` field (e.g. a crossover ``status: "none"`` beside ``crossover_budget: null``).
    """
    return _finite(json.loads(json.dumps(obj, default=_json_default)))


# ------------------------------------------------------------------ output targets


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _pid_of(name: str, prefix: str) -> int | None:
    rest = name[len(prefix) :]
    digits = rest.split(".", 1)[0]
    return int(digits) if digits.isdigit() else None


def clean_stale(folder: str | os.PathLike) -> list[Path]:
    """Remove this module's temporary files and staging folders left in ``folder`` by dead runs.

    Only hidden names this module makes (``.NAME.retcon-<pid>.*.tmp``, ``.retcon-staging-<pid>``) whose
    process no longer runs are removed; anything else is left alone.
    """
    folder = Path(folder)
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        name = e.name
        pid = None
        if name.startswith(_STAGING_PREFIX):
            pid = _pid_of(name, _STAGING_PREFIX)
        elif name.startswith(".") and name.endswith(_TMP_SUFFIX) and _TMP_MARK in name:
            pid = _pid_of(name[name.rindex(_TMP_MARK) :], _TMP_MARK)
        if pid is None or _pid_alive(pid):
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
            else:
                os.unlink(e.path)
            removed.append(Path(e.path))
        except OSError:
            pass
    return removed


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _existing_ancestor(path: Path) -> Path:
    """The nearest folder above ``path`` (or an ancestor that is a file or a link) that exists."""
    for anc in [path.parent, *path.parent.parents]:
        if anc.exists() or anc.is_symlink():
            return anc
    return path.parent


def _check_writable_location(option: str, path: Path, what: str) -> None:
    """The first existing ancestor of ``path`` must be a writable folder."""
    parent = _existing_ancestor(path)
    if not parent.is_dir():
        raise InputError(
            f"{option} {str(path)!r}: {str(parent)!r} is a file, so no {what} can be made under it."
        )
    if not os.access(parent, os.W_OK | os.X_OK) or not _can_create_in(parent):
        raise InputError(
            f"{option} {str(path)!r}: cannot write in {str(parent)!r} (permission denied); "
            f"choose a writable location."
        )


def _can_create_in(folder: Path) -> bool:
    """Whether a file can really be made in ``folder``: create and remove an empty temporary one.

    ``os.access`` answers yes for root on read-only file systems such as ``/sys``, so the run
    would fail only after its work; one probe up front costs a create and an unlink.
    """

    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".retcon-probe-")
    except OSError:
        return False
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass
    return True


def _check_not_input(
    option: str, path: Path, inputs: Iterable[tuple[str, str | os.PathLike | None]]
) -> None:
    for in_option, in_path in inputs:
        if in_path is None:
            continue
        if _same(path, Path(in_path)):
            raise InputError(
                f"{option} {str(path)!r} is the same file as {in_option}; writing it would "
                f"overwrite the input. Choose another {option}."
            )


# The free space an output target needs when its command has no estimate of its own: any usable
# disk has it, a full one (a few KiB left in reserved or partial blocks) fails it.
MIN_FREE_BYTES = 1 << 20


def _size(n: int) -> str:
    """``1,048,576 bytes (1.0 MiB)``: exact for the user's arithmetic, rounded for their eyes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n:,} bytes ({n / scale:.1f} {unit})"
    return f"{n:,} bytes"


def check_free_space(
    option: str, path: str | os.PathLike, need: int = MIN_FREE_BYTES
) -> int | None:
    """Refuse an output target whose file system has less than ``need`` bytes free.

    The free space is what an unprivileged process may use (``statvfs``: ``f_bavail *
    f_frsize``) on the file system of ``path`` if it is a folder, else of its nearest existing
    folder. A file system that cannot say (no ``statvfs``, an error) passes: the write path still
    says a full disk in one line.

    Args:
      option: how the user named the target (``--out``, ``--output``).
      path: the folder or file to be written (absent or not).
      need: the bytes the run will write there: the command's estimate, else ``MIN_FREE_BYTES``.

    Returns:
      the free bytes, or ``None`` when they cannot be known.

    Raises:
      InputError: naming ``option``, the folder, the free bytes and the minimum needed.
    """
    p = Path(path)
    folder = p if p.is_dir() else _existing_ancestor(p)
    statvfs = getattr(os, "statvfs", None)
    if statvfs is None:
        return None
    try:
        st = statvfs(folder)
    except OSError:
        return None
    free = int(st.f_bavail) * int(st.f_frsize)
    if free < need:
        raise InputError(
            f"{option} {str(p)!r}: only {_size(free)} free in {str(folder)!r}; the run needs at "
            f"least {_size(need)} there. Free some space or choose another {option}."
        )
    return free


def check_out_dir(
    option: str,
    path: str | os.PathLike,
    *,
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
    what: str = "the figures, tables and sidecar",
    min_free: int = MIN_FREE_BYTES,
) -> Path:
    """Check an output folder before any work; remove stale temporary files of dead runs in it.

    Args:
      option: how the user named it (``--out``).
      path: the folder; created later if absent.
      inputs: ``(option, path)`` of the run's input files; none may be the output.
      what: what the folder holds, for the message.
      min_free: the bytes the run writes there (``check_free_space``).

    Raises:
      InputError: ``path`` is a file, lies under a file, or cannot be written; or is an input; or
        its file system has less than ``min_free`` bytes free.
    """
    p = Path(path)
    if str(path) == "":
        raise InputError(f"{option} must be a folder path; got ''.")
    if p.exists() and not p.is_dir():
        raise InputError(
            f"{option} {str(p)!r} is a file; expected a folder (created if absent) for {what}."
        )
    _check_not_input(option, p, inputs)
    if p.is_dir():
        if not os.access(p, os.W_OK | os.X_OK) or not _can_create_in(p):
            raise InputError(
                f"{option} {str(p)!r}: cannot write in this folder (permission denied)."
            )
        clean_stale(p)
    else:
        _check_writable_location(option, p, "folder")
    check_free_space(option, p, min_free)
    return p


def check_out_file(
    option: str,
    path: str | os.PathLike,
    *,
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
    suffixes: Sequence[str] | None = None,
    min_free: int = MIN_FREE_BYTES,
) -> Path:
    """Check an output file before any work; remove stale temporary files of dead runs beside it.

    Args:
      option: how the user named it (``--output``, ``--router-out``).
      path: the file; replaced atomically later if it exists.
      inputs: ``(option, path)`` of the run's input files; none may be the output.
      suffixes: allowed suffixes (lower case, with the dot), or None for any.
      min_free: the bytes the run writes there (``check_free_space``).

    Raises:
      InputError: ``path`` is a folder, lies under a file, cannot be written, has the wrong suffix,
        or is an input; or its file system has less than ``min_free`` bytes free.
    """
    p = Path(path)
    if str(path) == "" or str(path).endswith(os.sep):
        raise InputError(f"{option} must be a file path; got {str(path)!r}.")
    if p.is_dir():
        raise InputError(f"{option} {str(p)!r} is a folder; expected a file path.")
    if suffixes is not None and p.suffix.lower() not in suffixes:
        listed = ", ".join(suffixes[:-1]) + (" or " if len(suffixes) > 1 else "") + suffixes[-1]
        raise InputError(f"{option} must end in {listed}; got {str(p)!r}.")
    _check_not_input(option, p, inputs)
    _check_writable_location(option, p, "file")
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"{option} {str(p)!r}: the file cannot be replaced (permission denied).")
    if p.parent.is_dir():
        clean_stale(p.parent)  # before the free space: stale temporary files hold some
    check_free_space(option, p, min_free)
    return p


def refuse_symlink(option: str, path: str | os.PathLike, what: str = "file") -> Path:
    """Refuse a symbolic link (dangling or not) at a path the run opens for writing in place.

    Files that are replaced (``atomic_write``: ``mkstemp`` + ``os.replace``) are safe whatever
    sits at their name; files opened in place (a lock, a partial file that is appended to) would
    follow a planted link and write through it. Those paths are checked here and opened with
    ``open_nofollow``.

    Raises:
      InputError: naming ``option``, the path and where the link points.
    """
    p = Path(path)
    if p.is_symlink():
        try:
            target = os.readlink(p)
        except OSError:
            target = "?"
        raise InputError(
            f"{option}: {str(p)!r} is a symbolic link (to {target!r}); the run writes its {what} "
            f"there in place and will not follow a link. Remove the link, or choose another "
            f"{option}."
        )
    return p


def open_nofollow(option: str, path: str | os.PathLike, flags: int, what: str = "file") -> int:
    """``os.open(path, flags | O_CREAT | O_NOFOLLOW, 0o666)`` for a regular file, or ``InputError``.

    A symbolic link at ``path`` (planted after ``refuse_symlink`` looked) makes the open fail
    instead of writing through it; anything but a regular file there is refused too.
    """
    import errno
    import stat

    try:
        fd = os.open(path, flags | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            refuse_symlink(option, path, what)
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{option}: {str(path)!r} is not a regular file; remove it.")
    return fd


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class OutputSet:
    """A run's ``--out DIR`` files, written as one set.

    Files are written (atomically, through the usual helpers) under ``stage``, a hidden folder
    inside ``DIR``; when the ``with`` block ends without an error they are moved into ``DIR``, the
    files named in ``last`` (the sidecar) after all the others, and an old copy of those is removed
    first, so a folder whose sidecar is present always holds one complete run. A JSON sidecar gets
    ``files_sha256``: every other file of the set with its checksum. An error or an
    interruption removes the staging folder; a folder left by a killed run is removed by the next
    run (``clean_stale``). Files of ``DIR`` that the run does not write are left alone.

    Example::

        with OutputSet(args.out, last=("sidecar.json",)) as out:
            write_json_atomic(out / "result.json", obj)
            write_json_atomic(out / "sidecar.json", meta)
        print(f"wrote {', '.join(out.names)} to {out.dir}")
    """

    def __init__(self, folder: str | os.PathLike, *, last: Sequence[str] = ("sidecar.json",)):
        self.dir = Path(folder)
        self.stage = self.dir / f"{_STAGING_PREFIX}{os.getpid()}"
        self.last = tuple(last)
        self.names: list[str] = []

    def __enter__(self) -> OutputSet:
        self.dir.mkdir(parents=True, exist_ok=True)
        clean_stale(self.dir)
        if self.stage.exists():
            shutil.rmtree(self.stage)
        self.stage.mkdir()
        return self

    def __truediv__(self, name: str) -> Path:
        return self.stage / name

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            shutil.rmtree(self.stage, ignore_errors=True)
            return
        try:
            self._commit()
        finally:
            shutil.rmtree(self.stage, ignore_errors=True)

    def _commit(self) -> None:
        files = sorted(p.relative_to(self.stage) for p in self.stage.rglob("*") if p.is_file())
        firsts = [f for f in files if f.as_posix() not in self.last]
        lasts = [f for f in files if f.as_posix() in self.last]
        # The sidecar names every other file of the set with its sha256, so a reader can tell
        # that a figure and a table belong to the run the sidecar describes.
        digests = {f.as_posix(): file_sha256(self.stage / f) for f in firsts}
        for f in lasts:
            if f.suffix == ".json":
                obj = json.loads((self.stage / f).read_text(encoding="utf-8"))
                if isinstance(obj, dict):
                    meta = obj["sidecar"] if isinstance(obj.get("sidecar"), dict) else obj
                    meta["files_sha256"] = digests
                    write_json_atomic(self.stage / f, obj)
        for f in lasts:  # the marker of a complete set goes first, comes back last
            try:
                os.unlink(self.dir / f)
            except FileNotFoundError:
                pass
        for f in firsts + lasts:
            (self.dir / f).parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.stage / f, self.dir / f)
        self.names = [f.as_posix() for f in files]
