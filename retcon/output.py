"""Atomic output and run sidecars: nothing half-written is ever left under a final name."""

from __future__ import annotations

import json
import os
import platform
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def atomic_write(
    path: str | os.PathLike, write: Callable[[Any], None], *, binary: bool = False
) -> Path:
    """Write ``path`` through ``write(fileobj)`` into a temporary sibling, then rename it over.

    A crash mid-write leaves the old file (or none) in place, never a truncated one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return atomic_write(path, lambda f: f.write(text))


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    return write_text_atomic(
        path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n"
    )


def save_figure_atomic(fig, path: str | os.PathLike, **kwargs) -> Path:
    """Save a matplotlib figure atomically; the format comes from the suffix of ``path``."""
    fmt = Path(path).suffix.lstrip(".") or "png"
    return atomic_write(path, lambda f: fig.savefig(f, format=fmt, **kwargs), binary=True)


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
    import dataclasses

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
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def to_jsonable(obj: Any) -> Any:
    """Round-trip through ``json`` so arrays, NamedTuples and dataclasses become plain JSON values."""
    return json.loads(json.dumps(obj, default=_json_default))
