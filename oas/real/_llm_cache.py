"""The content-addressed on-disk cache of endpoint answers: chat replies and embeddings, one home.

MODEL §9, "a rerun costs nothing and an interrupted run resumes": the key is the sha256 of the
canonical JSON of the request's content (chat: ``(model, messages, parameters)``; embeddings:
``(model, text)``); the base URL and the key are left out, so the same model served elsewhere
reuses the cache, and no secret is ever written. One file per entry,
``<cache>/<key[:2]>/<key>.json``, written atomically (``retcon.output``) right after its response,
so an interrupted run keeps every finished call. Only a well-formed answer is ever written; an
unreadable entry is treated as absent and fetched again.

Several callers may share the cache at once, threads of one run or separate processes: an entry is
written to a temporary file beside it and renamed over (``os.replace``), so a reader sees a whole
entry or none, and two writers of one key write the same answer.

References: docs/llm.md ("Cache").
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from retcon.output import write_json_atomic

# Bump when the entry layout or the key's contents change, so old entries are never misread.
CACHE_FORMAT = 1


def _digest(payload: dict) -> str:
    canon = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def cache_key(model: str, messages: list[dict], params: dict) -> str:
    """sha256 of the canonical JSON of ``(format, model, messages, params)``: same request, same key."""
    return _digest({"format": CACHE_FORMAT, "model": model, "messages": messages, "params": params})


def embedding_key(model: str, text: str) -> str:
    """sha256 of the canonical JSON of ``(format, "embeddings", model, text)``: one entry per text,
    whatever the batch it was sent in."""
    return _digest({"format": CACHE_FORMAT, "kind": "embeddings", "model": model, "input": text})


def entry_path(cache_dir, key: str) -> Path:
    return Path(cache_dir) / key[:2] / f"{key}.json"


def read_entry(cache_dir, key: str, field: str = "response") -> Any:
    """The cached ``field`` of entry ``key`` (a chat reply string, or an embedding list of finite
    numbers), or ``None`` when absent or unreadable."""
    try:
        entry = json.loads(entry_path(cache_dir, key).read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    value = entry.get(field)
    if field == "response":
        return value if isinstance(value, str) else None
    if (
        isinstance(value, list)
        and value
        and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in value
        )
    ):
        return value
    return None


def write_entry(cache_dir, key: str, entry: dict) -> Path:
    """Write ``entry`` (with ``key`` and ``format`` added) atomically under ``key``."""
    return write_json_atomic(
        entry_path(cache_dir, key), {"key": key, "format": CACHE_FORMAT, **entry}
    )


__all__ = ["CACHE_FORMAT", "cache_key", "embedding_key", "entry_path", "read_entry", "write_entry"]
