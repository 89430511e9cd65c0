"""Getting the data: a pinned LoCoMo download into a checked, atomic cache.

The cache folder is ``$RETCON_DATA_DIR`` when set, else the user cache directory
(``retcon.cache.user_cache_dir``: ``~/.cache/retcon`` on Linux). A file already there with the pinned sha256 is used as is (no download); a
download streams into a temporary sibling, is checked against the sha256 and only then renamed to
its final name, so a wrong or interrupted download leaves nothing under the final name.

References: MODEL §9 (LoCoMo: snap-research/locomo, ``data/locomo10.json``, CC BY-NC 4.0).
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

from retcon.cache import user_cache_dir
from retcon.errors import InputError, Spell
from retcon.output import atomic_write, file_sha256

# Pinned release: commit 3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376 of snap-research/locomo.
DATASETS = {
    "locomo": {
        "filename": "locomo10.json",
        "url": "https://raw.githubusercontent.com/snap-research/locomo/"
        "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376/data/locomo10.json",
        "sha256": "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
        "size": 2805274,
        "license": "CC BY-NC 4.0 (Maharana et al., ACL 2024)",
    },
    # The LoCoMo audit (oas.real._audit): commit 9493fb4b4af4256ed17a18e8fd0b3cfdeec29539 of
    # dial481/locomo-audit, which audits exactly the locomo10.json pinned above.
    "locomo-audit": {
        "filename": "locomo-audit-errors.json",
        "url": "https://raw.githubusercontent.com/dial481/locomo-audit/"
        "9493fb4b4af4256ed17a18e8fd0b3cfdeec29539/errors.json",
        "sha256": "f298ef46263fada20688a1d672be37d4f488c6da3b19343eea55ae5c1b5fe55e",
        "size": 150552,
        "license": "CC BY-NC 4.0 (dial481/locomo-audit)",
    },
}


class Fetched(NamedTuple):
    """Attributes: path (the cached file), downloaded (False when the cache already held it),
    sha256 (checked)."""

    path: Path
    downloaded: bool
    sha256: str


def data_dir() -> Path:
    """The data cache folder: ``$RETCON_DATA_DIR``, else the user cache directory (``~/.cache/retcon``
    on Linux)."""
    env = os.environ.get("RETCON_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return user_cache_dir()


#: The sha256 hex digest of a file (``oas.real.sha256_of``): ``retcon.output.file_sha256``.
sha256_of = file_sha256


def cached_path(name: str) -> Path:
    """Where ``name``'s file lives in the cache (it may not exist yet)."""
    if name not in DATASETS:
        raise InputError(f"dataset must be one of {sorted(DATASETS)}; got {name!r}.")
    return data_dir() / DATASETS[name]["filename"]


def fetch(
    name: str = "locomo",
    *,
    url: str | None = None,
    sha256: str | None = None,
    timeout: float = 60.0,
) -> Fetched:
    """Make sure the pinned file of ``name`` is in the cache, downloading it if needed.

    Args:
      name: ``"locomo"``.
      url: override the pinned address (``https://``, ``http://`` or ``file://``), e.g. a mirror.
      sha256: override the pinned checksum (with ``url``).
      timeout: seconds per network operation.

    Returns:
      ``Fetched(path, downloaded, sha256)``.

    Raises:
      InputError: unknown dataset, the download failed, or its sha256 differs (nothing is left
        under the final name then).
    """
    path = cached_path(name)
    spec = DATASETS[name]
    url = url or spec["url"]
    want = (sha256 or spec["sha256"]).lower()
    if path.is_file() and sha256_of(path) == want:
        return Fetched(path, False, want)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(
            f"cannot create the data cache {str(path.parent)!r} ({e.strerror}); set "
            f"RETCON_DATA_DIR to a writable folder."
        ) from None
    if not os.access(path.parent, os.W_OK):
        raise InputError(
            f"the data cache {str(path.parent)!r} is not writable; set RETCON_DATA_DIR to a "
            f"writable folder (or skip the cache: commands that read {name} take --data PATH)."
        )

    def download(out) -> None:
        # Stream into the temporary file of `atomic_write`; raising here leaves nothing behind.
        h = hashlib.sha256()
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                for chunk in iter(lambda: resp.read(1 << 20), b""):
                    h.update(chunk)
                    out.write(chunk)
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or e
            raise InputError(
                f"download of {name} from {url} failed: {reason}. With a copy you have, run "
                f"`retcon data fetch {name} --url file:///path/to/the/copy`, or give it to the "
                f"commands that read it with --data PATH."
            ) from None
        if h.hexdigest() != want:
            raise InputError(
                f"download of {name} from {url}: sha256 {h.hexdigest()} does not match the "
                f"pinned {want}; nothing was kept."
            )

    atomic_write(path, download, binary=True)
    return Fetched(path, True, want)


def resolve_data(name: str, data: str | None) -> Path:
    """The dataset file a command uses: ``--data PATH`` if given, else the cache (LoCoMo only).

    Raises:
      InputError: the file is missing, with the command that gets it.
    """
    if data:
        p = Path(data).expanduser()
        if not p.is_file():
            raise InputError(f"{Spell('resolve_data').lead('data')} {data!r}: no such file.")
        return p
    if name == "locomo":
        p = cached_path("locomo")
        if not p.is_file():
            raise InputError(
                f"LoCoMo is not in the data cache ({p}); run `retcon data fetch locomo` or "
                f"pass --data PATH."
            )
        return p
    raise InputError(
        f"{name} needs --data PATH (a LongMemEval file such as longmemeval_oracle.json; "
        f"see docs/real-data.md for where to get it)."
    )
