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

Durability in groups (``CacheJournal``, the chat client's writer): an answer is first appended to
the writer's journal, ``<cache>/journal/<pid>-<token>.jsonl`` (one line per entry, the entry's own
JSON), and ``put`` returns only once an ``fsync`` of the journal covering that line has finished:
one ``fsync`` serves every answer appended while the previous one ran (group commit). The entry
file is then written as before and synced later by a background thread. A caller that writes its
row after ``put`` returns therefore never has a row whose answer is not on disk. ``close`` waits
for the entry files to be synced and removes the journal; a journal left by a killed writer (its
``flock`` released) is replayed by the next ``recover_journals`` of that cache (entry files
missing or unreadable are rewritten from it, the rest synced), then removed. The entry files keep
the layout above, so the code before journals reads the cache unchanged.

References: docs/llm.md ("Cache").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
import tempfile
import threading
from pathlib import Path
from typing import Any

from retcon.output import check_out_dir, dumps, write_json_atomic

try:
    import fcntl
except ImportError:  # not on this platform: journals of other writers are left alone
    fcntl = None

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


JOURNAL_DIR = "journal"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_path(path: Path) -> None:
    """``fsync`` a file or a directory by name (directories: where the platform allows it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _write_entry_unsynced(path: Path, record: dict) -> Path:
    """``write_entry``'s bytes, temporary file and rename, without the ``fsync`` (the journal holds
    the answer durably until ``CacheJournal.close``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.retcon-{os.getpid()}.", suffix=".tmp", dir=path.parent
    )
    try:
        mask = os.umask(0o022)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # as retcon.output.atomic_write leaves it
        _write_all(fd, (dumps(record, indent=2) + "\n").encode("utf-8"))
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


class CacheJournal:
    """One writer's journal: entries durable in groups, one ``fsync`` per group (module docstring).

    ``put(key, entry)`` returns only after the journal line holding the entry is synced, then
    writes the entry file; thread-safe. A background thread syncs the entry files as they come;
    ``close()`` waits for it, removes the journal and refuses further ``put``s.
    """

    def __init__(self, cache_dir):
        self.cache_dir = Path(cache_dir)
        self._cond = threading.Condition()
        self._fd = -1
        self._path: Path | None = None
        self._written = self._synced = self._syncs = 0
        self._syncing = False
        self._closed = False
        self._pending: list[Path] = []  # entry files written, not yet synced by the flusher
        self._flusher: threading.Thread | None = None

    @property
    def path(self) -> Path | None:
        """The journal file (``None`` before the first ``put`` and after ``close``)."""
        return self._path

    @property
    def syncs(self) -> int:
        """How many ``fsync`` calls of the journal have finished (each covers a group)."""
        with self._cond:
            return self._syncs

    def _open(self) -> int:
        if self._closed:
            raise RuntimeError("CacheJournal.put after close")
        if self._fd < 0:
            folder = self.cache_dir / JOURNAL_DIR
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{os.getpid()}-{secrets.token_hex(6)}.jsonl"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_EXCL, 0o644)
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # held while this writer lives
            _fsync_path(folder)  # the journal's name is durable before any answer relies on it
            self._fd, self._path = fd, path
        return self._fd

    def put(self, key: str, entry: dict) -> Path:
        """Make ``entry`` durable under ``key``; returns its entry file once the group is synced.

        Raises:
          OSError: the journal could not be written or synced (the answer is then not returned
            as durable, and the caller must not write a row for it).
        """
        record = {"key": key, "format": CACHE_FORMAT, **entry}
        line = (dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        with self._cond:
            fd = self._open()
            _write_all(fd, line)
            self._written += 1
            seq = self._written
        self._sync_through(seq)
        path = _write_entry_unsynced(entry_path(self.cache_dir, key), record)
        with self._cond:
            self._pending.append(path)
            if self._flusher is None:
                self._flusher = threading.Thread(
                    target=self._flush_entries, name="retcon-cache-flusher", daemon=True
                )
                self._flusher.start()
            self._cond.notify_all()
        return path

    def _flush_entries(self) -> None:
        """Sync the entry files in the background, while the requests wait on the network, so
        ``close`` waits only for the last few."""
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                batch, self._pending = self._pending, []
                if not batch and self._closed:
                    return
            for e in batch:
                _fsync_path(e)
            for folder in {e.parent for e in batch}:
                _fsync_path(folder)

    def _sync_through(self, seq: int) -> None:
        """Return once line ``seq`` is synced: lead one ``fsync`` or wait for the one running."""
        with self._cond:
            while self._synced < seq:
                if not self._syncing:
                    break
                self._cond.wait()
            else:
                return
            self._syncing = True
            target, fd = self._written, self._fd
        ok = False
        try:
            os.fsync(fd)
            ok = True
        finally:
            with self._cond:
                self._syncing = False
                if ok:
                    self._synced = max(self._synced, target)
                    self._syncs += 1
                self._cond.notify_all()

    def close(self) -> None:
        """Sync the entry files written (and their folders), then remove the journal."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            while self._syncing:
                self._cond.wait()
            fd, path, flusher = self._fd, self._path, self._flusher
            self._fd, self._path = -1, None
            self._cond.notify_all()
        if flusher is not None:
            flusher.join()  # every entry file written is synced
        if fd < 0 or path is None:
            return
        os.unlink(path)
        _fsync_path(path.parent)
        os.close(fd)  # the lock goes with it


def recover_journals(cache_dir) -> int:
    """Replay the journals of writers that are gone (their lock free): every entry they hold is
    made durable as an entry file (rewritten when missing or unreadable), then the journal is
    removed. Returns the entries rewritten. A torn last line (a write cut short) is skipped."""
    folder = Path(cache_dir) / JOURNAL_DIR
    if fcntl is None or not folder.is_dir():
        return 0
    rewritten = 0
    for path in sorted(folder.glob("*.jsonl")):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a live writer's
            with os.fdopen(os.dup(fd), "rb") as f:
                lines = f.read().splitlines()
            for raw in lines:
                try:
                    record = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    continue
                key = record.get("key") if isinstance(record, dict) else None
                if not isinstance(key, str) or record.get("format") != CACHE_FORMAT:
                    continue
                target = entry_path(cache_dir, key)
                if _readable(cache_dir, key):
                    _fsync_path(target)
                else:
                    write_json_atomic(target, record)
                    rewritten += 1
                _fsync_path(target.parent)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            _fsync_path(folder)
        finally:
            os.close(fd)
    return rewritten


def check_cache_dir(cache_dir, name: str = "LLM cache") -> Path:
    """Refuse, before any call is made, a cache folder that could not be written or read back:
    ``cache_dir`` a file or under one, not writable, or holding a ``journal`` that is not a folder,
    a journal that is not a file, or an entry shard (two hex digits) that is not a folder.

    Args:
      cache_dir: the cache folder (created later if absent). name: how the user set it
        (``--llm-cache``), for the message.

    Raises:
      InputError: one line naming the folder, the offending path, what was expected and what came.
    """
    from retcon.errors import InputError

    root = check_out_dir(name, cache_dir, what="the cached LLM responses")
    if not root.is_dir():
        return root

    def refuse(path: Path, expected: str) -> None:
        got = "a folder" if path.is_dir() else "a file" if path.is_file() else "not a regular file"
        raise InputError(
            f"{name} {str(root)!r}: {str(path)!r} should be {expected}; got {got} (a damaged "
            "cache: move it away or choose another folder)."
        )

    journals = root / JOURNAL_DIR
    if journals.exists() or journals.is_symlink():
        if journals.is_symlink() or not journals.is_dir():
            refuse(journals, "the folder of the cache's journals")
        check_out_dir(name, journals, what="the cache's journals")
        for j in sorted(journals.glob("*.jsonl")):
            if j.is_symlink() or not j.is_file():
                refuse(j, "a journal file")
    for child in sorted(root.iterdir()):
        shard = len(child.name) == 2 and all(c in "0123456789abcdef" for c in child.name)
        if shard and (child.is_symlink() or not child.is_dir()):
            refuse(child, "a folder of cache entries")
    return root


def _readable(cache_dir, key: str) -> bool:
    try:
        entry = json.loads(entry_path(cache_dir, key).read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(entry, dict) and entry.get("key") == key


__all__ = [
    "CACHE_FORMAT",
    "CacheJournal",
    "cache_key",
    "check_cache_dir",
    "embedding_key",
    "entry_path",
    "read_entry",
    "recover_journals",
    "write_entry",
]
