"""A ``retcon pair`` run: load, build instances, write paired data resumably, summarize.

Output: ``--output`` (``.jsonl`` or ``.csv``) through ``oas._paired_writer.PairedWriter`` (rows appended to
``<out>.partial``, renamed on completion), and a sidecar ``<out>.meta.json`` (options, versions,
load report, summary). A rerun with the same options skips the rows already written; a rerun with
different options is refused, so one file never mixes two protocols.

References: MODEL §8-9; docs/paired-data.md.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from oas.real._checks import check_budgets
from retcon.errors import (
    InputError,
    Spell,
    check_choice,
    check_integer,
    check_range,
    decode_utf8,
    worded_for,
)
from retcon.vocab import ACTIONS, LLM_JUDGES, OPERATORS, READERS

# Options that change the rows; a resumed file must have been written with the same ones.
_PROTOCOL_FIELDS = (
    "dataset",
    "operators",
    "reader",
    "budgets",
    "granularity",
    "order",
    "packing",
    "tokenizer",
    "embedder",
    "sentence_threshold",
    "strict",
    "include_abstention",
    "llm_judge",
)


#: PairJob's fields in error messages: ``PairJob: reader`` from Python, ``--reader`` in the CLI.
_SPELL = Spell(
    "PairJob",
    py={
        "concurrency": "llm['concurrency']",
        "timeout": "llm['timeout']",
        "max_response_bytes": "llm['max_response_bytes']",
    },
    cli={
        "out": "--output",
        "pair_protocol": "--protocol",
        "dataset": "dataset",
        "timeout": "--llm-timeout",
        "max_response_bytes": "--llm-max-response-bytes",
    },
)


@dataclass(frozen=True)
class PairJob:
    """Everything a ``retcon pair`` run needs; validated on construction."""

    dataset: str
    out: str
    data: str | None = None
    operators: str = "dataset"
    reader: str = "lexical"
    budgets: tuple[int, ...] | None = None
    limit: int | None = None
    first: int | None = None
    structure: bool = True
    granularity: str = "session"
    order: str = "chronological"
    packing: str = "cut"
    tokenizer: str = "regex"
    embedder: str = "hashed-tfidf"
    sentence_threshold: float = 0.5
    strict: bool = False
    include_abstention: bool = False
    llm: dict = field(default_factory=dict)
    llm_judge: str = "lexical"
    seed: int = 0
    pair_protocol: str = "oracle"
    retriever: str = "bm25"
    top_k: int | None = None
    type_source: str = "predicted"
    locomo_audit: str | None = None
    audit_mode: str = "drop,cite"
    design: str = "ours"
    judge_threshold: float = 0.10
    realisations: int = 1

    def __post_init__(self):
        from oas.real._pair import DEFAULT_BUDGETS

        spell = _SPELL
        _apply_design(self)
        check_choice(spell.lead("dataset"), self.dataset, ("locomo", "longmemeval"))
        check_choice(spell.lead("operators"), self.operators, ("dataset", "extractive", "llm"))
        check_choice(spell.lead("reader"), self.reader, READERS)
        check_choice(spell.lead("llm_judge"), self.llm_judge, LLM_JUDGES)
        _check_end_to_end(self)
        object.__setattr__(self, "budgets", check_budgets(self.budgets or DEFAULT_BUDGETS, spell))
        from oas.real.llm._config import check_limits

        # the endpoint's limits, with the job, before the data is read (issue 48)
        limits = ("concurrency", "timeout", "max_response_bytes")
        check_limits(spell, *(self.llm.get(k) for k in limits))
        check_range(spell.lead("judge_threshold"), self.judge_threshold, 0.0, 1.0, high_open=False)
        _check_realisations(self)
        for name in ("limit", "first"):
            n = getattr(self, name)
            if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n <= 0):
                raise InputError(f"{spell.lead(name)} must be a positive integer; got {n!r}.")
        if self.limit is not None and self.first is not None:
            raise InputError(
                f"{spell.lead('first')} and {spell('limit')} are two selections of the questions "
                f"(the first N of the file; N spread over the conversations); give one of them."
            )
        if not 0.0 < self.sentence_threshold <= 1.0:
            raise InputError(
                f"{spell.lead('sentence_threshold')} must be in (0, 1]; "
                f"got {self.sentence_threshold:g}."
            )
        if self.dataset == "longmemeval" and self.operators == "dataset":
            raise InputError(
                f"{spell.lead('operators')} dataset needs LoCoMo's own observations and session "
                f"summaries; LongMemEval has none. Use {spell.given('operators', 'extractive')} "
                f"or {spell.given('operators', 'llm')}."
            )
        if self.locomo_audit is not None:
            from oas.real._audit import parse_audit_modes

            if self.dataset != "locomo":
                raise InputError(
                    f"{spell.lead('locomo_audit')} audits LoCoMo; got dataset {self.dataset!r}."
                )
            modes = parse_audit_modes(self.audit_mode, spell.lead("audit_mode").rstrip())
            object.__setattr__(self, "audit_mode", ",".join(modes))
            if not Path(self.locomo_audit).expanduser().is_file():
                raise InputError(
                    f"{spell.lead('locomo_audit')} {self.locomo_audit!r}: no such file."
                )
        suffix = Path(self.out).suffix.lower()
        if suffix not in (".jsonl", ".ndjson", ".csv"):
            raise InputError(
                f"{spell.lead('out')} must end in .jsonl or .csv (resumable formats); "
                f"got {self.out!r}."
            )

    def protocol(self) -> dict:
        d = asdict(self)
        p = {k: d[k] for k in _PROTOCOL_FIELDS}
        p["budgets"] = list(p["budgets"])
        if "llm" in (self.operators, self.reader):
            # The model, not its address, defines the outcomes: the same model served elsewhere
            # resumes (the LLM cache key leaves the address out too).
            p["llm_model"] = self.llm.get("model")
        if self.pair_protocol != "oracle":  # oracle digests stay those of earlier runs
            p.update(
                protocol=self.pair_protocol,
                retriever=self.retriever,
                top_k=self.top_k,
                type_source=self.type_source,
            )
        if not self.structure:  # rows without evidence_structure (runs with it keep digests)
            p["structure"] = False
        if self.design != "ours":  # runs of our design keep their digests
            p["design"] = self.design
        if self.design == "paper" and self.pair_protocol == "end-to-end":
            p["candidates"] = "full-history"  # MODEL §11; earlier paper end-to-end rows differ
        if self.realisations != 1:  # one realisation keeps the digests of earlier runs
            p["realisations"] = self.realisations
        if self.reader == "llm" and self.llm_judge == "llm":
            # Checked-judge rows carry the lexical verdicts (meta_lexical_<action>): a file of an
            # unchecked judge's rows is not resumed into one of them.
            p["judge_check"] = "meta_lexical"
        if self.locomo_audit is not None:  # runs without the audit keep their digests
            from oas.real._fetch import sha256_of

            p["locomo_audit"] = {
                "modes": self.audit_mode,
                "sha256": sha256_of(Path(self.locomo_audit).expanduser()),
            }
        return p


def _apply_design(job: PairJob) -> None:
    """``--design paper``: the paper's granularity, packing, token count and budgets (MODEL §11,
    ``oas.real._paper_design.design_overlay``); an option given another value than ours or the
    paper's is refused."""
    from oas.real._paper_design import DESIGNS, design_overlay

    check_choice(_SPELL.lead("design"), job.design, DESIGNS)
    defaults = {f.name: f.default for f in fields(PairJob)}
    overlay = design_overlay(job.design, job.dataset, job.pair_protocol)
    for name, value in overlay.items():
        if name == "budgets":  # --budgets, when given, replaces the paper's
            if job.budgets is None:
                object.__setattr__(job, "budgets", value)
            continue
        given = getattr(job, name)
        if given not in (defaults[name], value):
            if name in (
                "retriever",
                "top_k",
            ):  # the paper's full-history run (oas.real._full_history)
                raise InputError(
                    f"{_SPELL.lead('design')}: 'paper' with {_SPELL.given('pair_protocol', 'end-to-end')} "
                    f"is the paper's full-history run (BM25 top {overlay['top_k']} turns, MODEL "
                    f"§11) and sets {_SPELL.given(name, value)}; got {_SPELL.given(name, given)}. "
                    f"Drop {_SPELL(name)}."
                )
            raise InputError(
                f"{_SPELL.lead('design')}: 'paper' sets {_SPELL.given(name, value)}; got "
                f"{_SPELL.given(name, given)}. Drop {_SPELL(name)}, or use {_SPELL.given('design', 'ours')}."
            )
        object.__setattr__(job, name, value)


#: The most label realisations one run makes (the paper: 3); each multiplies the LLM calls.
MAX_REALISATIONS = 10


def _check_realisations(job: PairJob) -> None:
    """``--realisations R`` (MODEL §11: label reruns averaged within question) needs an LLM
    backend: offline operators, reader and judge are deterministic, so every rerun would repeat
    the first."""
    check_integer(
        _SPELL.lead("realisations"), job.realisations, 1, MAX_REALISATIONS, unit=" (label reruns)"
    )
    if job.realisations > 1 and "llm" not in (job.operators, job.reader):
        raise InputError(
            f"{_SPELL.given('realisations', job.realisations)}: label realisations rerun the LLM "
            f"calls (MODEL §11), but {_SPELL.given('operators', job.operators)} and "
            f"{_SPELL.given('reader', job.reader)} are offline and deterministic, so every "
            f"realisation would equal the first. Use {_SPELL.given('operators', 'llm')} or "
            f"{_SPELL.given('reader', 'llm')}, or drop {_SPELL('realisations')}."
        )


# More units than any conversation holds: a larger --top-k is a typo (all units are retrieved).
MAX_TOP_K = 100_000


def _check_end_to_end(job: PairJob) -> None:
    from oas.real._retrieval import PROTOCOLS, RETRIEVERS, TYPE_SOURCES

    spell = _SPELL
    check_choice(spell.lead("pair_protocol"), job.pair_protocol, PROTOCOLS)
    check_choice(spell.lead("retriever"), job.retriever, RETRIEVERS)
    check_choice(spell.lead("type_source"), job.type_source, TYPE_SOURCES)
    if job.top_k is not None:
        check_integer(spell.lead("top_k"), job.top_k, 1, MAX_TOP_K, unit=" (units retrieved)")


def _load(job: PairJob):
    from oas.real._fetch import resolve_data

    path = resolve_data(job.dataset, job.data)
    if job.dataset == "locomo":
        from oas.real._locomo import load_locomo

        loaded = load_locomo(path, strict=job.strict)
        if job.locomo_audit is not None:
            from oas.real._audit import apply_audit
            from oas.real._fetch import sha256_of

            audit = Path(job.locomo_audit).expanduser()
            modes = tuple(job.audit_mode.split(","))
            audited = apply_audit(loaded, audit, modes, sha256=sha256_of(audit))
            return path, audited.loaded, audited.report
        return path, loaded, None
    from oas.real._longmemeval import load_longmemeval

    return path, load_longmemeval(path, include_abstention=job.include_abstention), None


def _endpoint(job: PairJob):
    """The job's LLM endpoint, resolved once from ``job.llm`` else the environment
    (``resolve_endpoint``), or None when neither the operators nor the reader is ``llm``."""
    if "llm" not in (job.operators, job.reader):
        return None
    from oas.real.llm._config import resolve_endpoint

    keys = (
        "base_url",
        "model",
        "api_key",
        "cache_dir",
        "concurrency",
        "timeout",
        "follow_redirects",
        "max_response_bytes",
    )
    settings: dict[str, Any] = {k: job.llm.get(k) for k in keys}
    return resolve_endpoint(**settings)


def _backends(job: PairJob, endpoint=None, *, pool=None, realisation: int = 0):
    """``(operators, reader, tokenizer, embedder, pool)`` of the job; realisation ``r > 0`` sends
    the LLM requests with seed ``r`` (its own cache keys: a rerun of the labels, MODEL §11) through
    the given ``pool``; realisation 0 is the run's usual backends."""
    from oas.real._embed import make_embedder
    from oas.real._operators import make_operators
    from oas.real._readers import make_reader
    from oas.real._text import make_tokenizer

    llm: dict[str, Any] = {}
    if endpoint is not None:
        from oas.real.llm._client import EndpointPool

        # One pool for both roles: --concurrency bounds operators and reader together.
        pool = pool if pool is not None else EndpointPool(endpoint)
        llm = {"endpoint": endpoint, "pool": pool, "seed": realisation}
    else:
        pool = None
    operators = make_operators(job.operators, **(llm if job.operators == "llm" else {}))
    if job.reader == "llm":
        reader = make_reader("llm", judge=job.llm_judge, **llm)
    elif job.reader == "sentence":
        reader = make_reader("sentence", threshold=job.sentence_threshold)
    else:
        reader = make_reader(job.reader)
    return operators, reader, make_tokenizer(job.tokenizer), make_embedder(job.embedder), pool


# Every row carries the digest of the options that made it, so the file itself says which protocol
# it holds: deleting or editing `<out>.meta.json` cannot make a rerun mix two protocols.
PROTOCOL_COLUMN = "meta_protocol"


def protocol_digest(protocol: dict) -> str:
    """A short digest of a run's protocol (the options that change the rows)."""
    text = json.dumps(protocol, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _first_row(path: Path) -> dict | None:
    """The first complete row of a JSONL or CSV paired-data file, or None if it has none."""
    import csv
    import io

    data = path.read_bytes()
    text = decode_utf8(data[: data.rfind(b"\n") + 1], str(path))
    if path.name.removesuffix(".partial").lower().endswith(".csv"):
        reader = csv.DictReader(io.StringIO(text))
        return next(iter(reader), None)
    for line_no, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                raise InputError(f"{path}:{line_no}: not valid JSON; cannot resume it.") from None
            return row if isinstance(row, dict) else None
    return None


def _check_resume(job: PairJob, meta_path: Path, out: Path) -> None:
    partial = Path(f"{out}.partial")
    new = job.protocol()
    digest = protocol_digest(new)
    old = {}
    if meta_path.is_file():
        try:
            old = json.loads(meta_path.read_text(encoding="utf-8")).get("config", {}) or {}
        except (json.JSONDecodeError, OSError, UnicodeDecodeError, AttributeError):
            old = {}
    for path in (partial, out):
        if not path.is_file():
            continue
        row = _first_row(path)
        if row is None:
            continue
        stamp = row.get(PROTOCOL_COLUMN)
        if stamp == digest:
            continue
        diff = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        if stamp is not None and diff and isinstance(old, dict) and old:
            k = diff[0]
            detail = f"was written with {k}={old.get(k)!r}; this run has {k}={new.get(k)!r}"
        elif stamp is None:
            detail = "holds rows without a protocol stamp (written by an older retcon)"
        else:
            detail = f"was written with other options (protocol {stamp}; this run's is {digest})"
        raise InputError(
            f"{_SPELL.lead('out')} {str(out)!r} {detail}. Rerun with the same options to resume, "
            f"or choose a new {_SPELL('out')}."
        )


class _Lock:
    """An exclusive lock on ``<out>.lock`` for the run; a second run on the same output is refused."""

    def __init__(self, out: Path):
        self.path = Path(f"{out}.lock")
        self.file = None

    def __enter__(self) -> _Lock:
        import fcntl

        from retcon.output import open_nofollow, refuse_symlink

        self.path.parent.mkdir(parents=True, exist_ok=True)
        refuse_symlink("--output", self.path, "lock")
        # No truncation on open: the lock may be another run's, whose pid we read below.
        fd = open_nofollow("--output", self.path, os.O_RDWR, "lock")
        f = open(fd, "r+", encoding="utf-8")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "?"
            f.close()
            raise InputError(
                f"{_SPELL.lead('out')} {str(self.path)[: -len('.lock')]!r}: another retcon pair run (pid "
                f"{holder}) is writing it; wait for it to finish, or choose another --output."
            ) from None
        try:
            f.seek(0)
            f.truncate()
            f.write(f"{os.getpid()}\n")
            f.flush()
        except OSError as e:  # disk full: the lock is ours (held), so it goes; name the file
            self.path.unlink(missing_ok=True)
            try:
                f.close()
            except OSError:  # the unwritten pid again: the flush above said why
                pass
            raise OSError(e.errno, e.strerror or str(e), str(self.path)) from e
        self.file = f
        return self

    def __exit__(self, *exc) -> None:
        import fcntl

        if self.file is not None:
            self.path.unlink(missing_ok=True)
            fcntl.flock(self.file.fileno(), fcntl.LOCK_UN)
            self.file.close()


def _discard_new(partial: Path, meta: Path, had_partial: bool, had_meta: bool) -> None:
    """Remove the partial file and sidecar this run created, when it wrote no row."""
    for path, had in ((partial, had_partial), (meta, had_meta)):
        if not had:
            path.unlink(missing_ok=True)


def run_pair_job(job: PairJob, *, progress: bool | Callable[[int, int, str], None] = True) -> dict:
    """Run ``retcon pair``; returns the JSON summary (also written to ``<out>.meta.json``).

    Args:
      job: the run's options.
      progress: ``progress(done, total, note)`` called as questions are written (``note``: the
        endpoint pool's counters of an LLM run, else empty); the command line draws its bar from
        it. ``True``: a tqdm bar on stderr of this function's own; ``False``: nothing.

    Returns:
      dict with ``output``, ``n_rows``, ``n_written``, ``n_resumed``, the load report (``load``),
      ``protocol``, compress ratios of the operators, and ``summarize``'s accuracy / delta /
      crossover tables.

    References: MODEL §6, §8, §9.
    """
    from retcon.output import refuse_symlink

    out = Path(job.out)
    refuse_symlink("--output", f"{out}.partial", "partial rows")
    with _Lock(out):
        return _run_locked(job, out, progress=progress)


def _run_locked(job: PairJob, out: Path, *, progress) -> dict:
    import jax
    import numpy as np

    from oas._paired import read_paired
    from oas._paired_writer import PairedWriter
    from oas.real._pair import PairConfig, iter_queries, summarize
    from retcon.output import sidecar, write_json_atomic

    meta_path = Path(f"{out}.meta.json")
    endpoint = _endpoint(job)
    if endpoint is not None:  # the protocol records the model, from arguments or environment
        job = replace(job, llm={**job.llm, "model": endpoint.model})
    _check_resume(job, meta_path, out)
    data_path, loaded, audit = _load(job)  # audit: the AuditReport of --locomo-audit, or None
    operators, reader, tokenizer, embedder, pool = _backends(job, endpoint)
    # --realisations R: the labels rerun R - 1 more times (seeds 1 .. R-1), averaged per row
    reruns = [
        _backends(job, endpoint, pool=pool, realisation=r)[:2] for r in range(1, job.realisations)
    ]
    assert job.budgets is not None  # PairJob.__post_init__ fills in the default grid
    typing = None
    if job.pair_protocol == "end-to-end" and job.type_source == "predicted":
        from oas.real._classifier import predict_conversation_types

        words = {"cross_fit_types: ": "the type classifier of --type-source predicted: "}
        with worded_for(f"--data {data_path}", words):
            types, fit = predict_conversation_types(loaded.conversations)
        typing = (types, fit.as_json())
    config = PairConfig(
        job.budgets,
        job.granularity,
        job.order,
        job.packing,
        protocol=job.pair_protocol,
        retriever=job.retriever,
        top_k=job.top_k,
        predicted_types=typing[0] if typing else None,
        design=job.design,
    )
    if job.design == "paper" and job.dataset == "locomo":  # the paper's sample, then --limit of it
        from oas.real._paper_design import paper_sample_queries

        pairs = select_queries(paper_sample_queries(loaded.conversations), job.limit, job.first)
    else:
        pairs = select_queries(list(iter_queries(loaded.conversations)), job.limit, job.first)
    _check_selection(out, pairs)
    split = None
    if job.design == "paper" and job.dataset == "longmemeval":  # the paper's 350/75/75, scaled
        from oas.real._paper_design import paper_split

        split = paper_split([q.query_id for _, q in pairs])
    if not pairs:
        raise InputError(
            f"{data_path}: no questions left to pair (excluded {loaded.report.n_excluded}: "
            f"{loaded.report.excluded_reason}; without evidence {loaded.report.n_no_evidence})."
        )
    meta = sidecar(
        job.protocol(),
        seed=job.seed,
        command=f"retcon pair {job.dataset}",
        data=str(data_path),
        load=loaded.report._asdict(),
        **({"locomo_audit": audit.as_json()} if audit is not None else {}),
    )
    partial = Path(f"{out}.partial")
    had_meta, had_partial = meta_path.exists(), partial.exists()
    write_json_atomic(meta_path, meta)
    if out.is_file() and not partial.is_file():
        shutil.copyfile(out, partial)  # resume on top of a finished file (e.g. a larger --limit)
    stamp = protocol_digest(job.protocol())
    try:
        writer = PairedWriter(out, packing=job.packing)
    except BaseException:
        _discard_new(partial, meta_path, had_partial, had_meta)
        raise
    try:
        done = set(writer.ids)
        work = functools.partial(
            _realised_rows,
            backends=[(operators, reader), *reruns],
            config=config,
            tokenizer=tokenizer,
            skip_ids=done,
        )
        n_written = _write_rows(
            job, pairs, writer, work, embedder, pool, progress, stamp, audit, split, len(reruns)
        )
        n_resumed = len(done)
        writer.finalize()
    except BaseException:
        try:
            writer.close()
        except OSError:  # e.g. the disk that failed the write fails the flush too
            pass
        if not writer.ids:  # nothing of this run's protocol was kept: leave no files behind
            _discard_new(partial, meta_path, had_partial, had_meta)
        raise

    data = read_paired(out)
    summary = summarize(data, key=jax.random.PRNGKey(job.seed))
    ratios = {}
    _, first = np.unique(np.asarray(data.query_id).astype(str), return_index=True)
    cluster = np.asarray(data.cluster_tokens, dtype=np.float64)  # read_paired always sets it
    for action in OPERATORS:
        gen = np.asarray(data.meta[f"meta_tokens_{action}"][first], dtype=np.float64)
        rho = gen / cluster[first]
        ratios[action] = {
            "median": float(np.median(rho)),
            "p5": float(np.percentile(rho, 5)),
            "p95": float(np.percentile(rho, 95)),
        }
    summary.update(
        {
            "output": str(out),
            "n_written": n_written,
            "n_resumed": n_resumed,
            "load": loaded.report._asdict(),
            "protocol": job.protocol(),
            "compress_ratio": ratios,
        }
    )
    summary["load"]["dropped"] = list(summary["load"]["dropped"])
    if job.pair_protocol == "end-to-end":
        from oas.real._endtoend import retrieval_recall_summary

        summary["retrieval_recall"] = retrieval_recall_summary(data)
        if typing is not None:
            summary["type_classifier"] = typing[1]
    if job.reader == "llm" and job.llm_judge == "llm":  # before the call counts: they count it
        summary["judge_check"] = _check_judge(job, reader, pairs, data, pool)
        meta["judge_check"] = summary["judge_check"]  # provenance of the run's outcomes
    calls = {}
    for k, (part, obj) in enumerate((("operators", operators), ("reader", reader))):
        stats = getattr(obj, "stats", None)  # the llm backend counts cache hits and requests
        if stats is not None and hasattr(stats, "_asdict"):
            total = stats._asdict()
            for rerun in reruns:  # every realisation's calls count
                more = getattr(rerun[k], "stats", None)
                if more is not None and hasattr(more, "_asdict"):
                    total = {f: total[f] + v for f, v in more._asdict().items()}
            calls[part] = total
    if calls:
        summary["llm_calls"] = calls
    if pool is not None:
        summary["llm_endpoints"] = pool.endpoints
    if audit is not None:
        summary["locomo_audit"] = {k: v for k, v in audit.as_json().items() if k != "changes"}
    meta["summary"] = summary
    write_json_atomic(meta_path, meta)
    return summary


def _check_judge(job: PairJob, reader, pairs, data, pool) -> dict:
    """The judge probe and the LLM-vs-lexical agreement of a ``--llm-judge llm`` run
    (``oas.real.llm._judge``); a flagged judge is said on stderr too."""
    from oas.real.llm._judge import judge_agreement, judge_probe

    workers = pool.config.concurrency if pool is not None else 1
    probe = judge_probe(reader, pairs, threshold=job.judge_threshold, workers=workers)
    import numpy as np

    llm = np.asarray(data.outcomes, dtype=np.float64)  # (rows, actions), ACTIONS order
    if job.realisations > 1:  # averaged outcomes: the check reads the first realisation's verdicts
        llm = np.stack([np.asarray(data.meta[f"meta_y_{a}_r0"], float) for a in ACTIONS], 1)
    lexical = np.stack([np.asarray(data.meta[f"meta_lexical_{a}"], float) for a in ACTIONS], 1)
    agreement = judge_agreement(llm.reshape(-1), lexical.reshape(-1))
    if probe.flagged:
        print(f"retcon pair: warning: {probe.line()}", file=sys.stderr)
    return {
        "probe": probe.as_json(),
        "line": probe.line(),
        "agreement": agreement.as_json(),
        "agreement_lines": agreement.lines(),
    }


def _write_rows(
    job, pairs, writer, work, embedder, pool, progress, stamp, audit, split, n_reruns
) -> int:
    """Work on up to ``concurrency`` questions at once; write their rows in question order.

    ``work(query, contexts)``: the question's rows (`_realised_rows`), ``contexts`` one
    ``ConversationContext`` per realisation (``1 + n_reruns``). ``stamp``, ``audit``, ``split``:
    the protocol digest, the ``--locomo-audit`` report and the paper's split added to each row.

    Each question's rows are computed by a worker thread (its LLM calls wait on the endpoint pool);
    the writer takes them strictly in input order, so the file is the same whatever order the
    calls finish in. On an error or an interrupt the rows of every question before the failing one
    are already written, and every finished call is in the cache: a rerun resumes from there.
    """
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor, wait

    from oas._structure import STRUCTURE_COLUMN
    from oas.real._pair import ConversationContext

    workers = pool.config.concurrency if pool is not None else 1
    window = max(2 * workers, workers + 4)  # questions submitted ahead of the one being written
    bar = _progress_bar(job, len(pairs), progress)
    # per conversation, one context per realisation: each keeps its own generated records
    contexts: dict[str, list[ConversationContext]] = {}
    open_queries: dict[str, int] = {}
    pending: deque = deque()
    n_written = 0

    def refresh():
        if bar is not None and pool is not None:
            bar.set_postfix_str(pool.progress().line(), refresh=True)

    def emit_head():
        nonlocal n_written
        cid, fut = pending[0]
        while not wait([fut], timeout=0.5).done:
            refresh()
        rows = fut.result()
        pending.popleft()
        for row in rows:
            if audit is not None:  # provenance: the modes, and what they changed in this row
                change = audit.changes.get(str(row.get("query_id")), "")
                row = {**row, "meta_audit": ",".join(audit.modes), "meta_audit_change": change}
            if split is not None:  # --design paper on LongMemEval: the question's split
                row = {**row, "meta_split": split[str(row["query_id"])]}
            if not job.structure:  # --no-structure: rows without evidence_structure
                row = {k: v for k, v in row.items() if k != STRUCTURE_COLUMN}
            writer.write({**row, PROTOCOL_COLUMN: stamp})
            n_written += 1
        open_queries[cid] -= 1
        if open_queries[cid] == 0:
            del open_queries[cid], contexts[cid]
        if bar is not None:
            bar.update(1)
            refresh()

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="retcon-pair") as ex:
        try:
            for conv, query in pairs:
                cid = conv.conversation_id
                if cid not in contexts:
                    ctx = ConversationContext(conv, job.granularity, embedder)
                    contexts[cid] = [ctx, *(_fresh_copy(ctx) for _ in range(n_reruns))]
                open_queries[cid] = open_queries.get(cid, 0) + 1
                fut = ex.submit(work, query, contexts[cid])
                pending.append((cid, fut))
                while len(pending) >= window:
                    emit_head()
            while pending:
                emit_head()
        except BaseException:
            for _, fut in pending:
                fut.cancel()
            if pool is not None:
                pool.close()
            raise
        finally:
            if bar is not None:
                bar.close()
    return n_written


def _fresh_copy(ctx):
    """``ctx`` with an empty cache of generated records (the fitted embedder shared)."""
    import copy

    c = copy.copy(ctx)
    c.generated = {}
    return c


def _realised_rows(query, contexts, *, backends, **kw) -> list[dict]:
    """The rows of ``query`` under each ``(operators, reader)`` of ``backends``, realisation ``r``
    with ``contexts[r]`` (its own generated records): one realisation as ``query_rows`` gives
    them (``kw``: its config, tokenizer and skip_ids); several averaged
    (``average_realisations``)."""
    from oas.real._pair import query_rows

    runs = [
        query_rows(query, c, operators=operators, reader=reader, **kw)
        for c, (operators, reader) in zip(contexts, backends, strict=True)
    ]
    return runs[0] if len(runs) == 1 else average_realisations(runs)


def average_realisations(runs: list[list[dict]]) -> list[dict]:
    """Rows of one question under ``R`` label realisations, averaged within question and budget.

    Args:
      runs: ``R >= 2`` lists of the same rows (same ``instance_id`` order), one per realisation.

    Returns:
      the first realisation's rows with each ``y_<action>`` the mean over realisations, each
      realisation's own outcome kept as ``meta_y_<action>_r<k>``, and ``meta_realisations = R``;
      features, structure and the other columns are the first realisation's.

    References: MODEL §11 (three label realisations, averaged within question before inference).
    """

    out = []
    for rows in zip(*runs, strict=True):
        ids = {r["instance_id"] for r in rows}
        if len(ids) != 1:
            raise InputError(
                f"average_realisations: the realisations' rows differ ({sorted(ids)}); expected "
                "the same instance in each."
            )
        row = dict(rows[0])
        for a in ACTIONS:
            ys = [float(r[f"y_{a}"]) for r in rows]
            row[f"y_{a}"] = sum(ys) / len(ys)
            for k, y in enumerate(ys):
                row[f"meta_y_{a}_r{k}"] = y
        row["meta_realisations"] = len(rows)
        out.append(row)
    return out


def select_queries(pairs: list, limit: int | None = None, first: int | None = None) -> list:
    """The ``(conversation, query)`` pairs a run pairs, in file order (``--limit``, ``--first``).

    ``first``: the first ``first`` pairs. ``limit``: spread over the conversations, as
    ``paper-checks --limit``: the first ``ceil(limit / G)`` questions of each of the ``G``
    conversations in ``pairs``, so every conversation stays a group (a grouped fit needs
    several); with fewer questions than conversations (LongMemEval: one question each), one
    question of each of the first ``limit`` conversations. Neither: all of them.
    """
    if first is not None:
        return pairs[:first]
    if limit is None:
        return pairs
    groups = list(dict.fromkeys(conv.conversation_id for conv, _ in pairs))
    per = -(-limit // max(len(groups), 1))
    used = set(groups[:limit])
    taken: dict[str, int] = {}
    out = []
    for conv, query in pairs:
        cid = conv.conversation_id
        if cid in used and taken.get(cid, 0) < per:
            taken[cid] = taken.get(cid, 0) + 1
            out.append((conv, query))
    return out


def _check_selection(out: Path, pairs: list) -> None:
    """Refuse to resume ``out`` when it holds rows of questions this run does not select: its
    rows were chosen by another ``--limit`` or ``--first`` (``--limit`` took the first N questions
    before it spread over the conversations); a selection that holds the old one resumes."""
    from oas._paired_writer import existing_ids

    chosen = {str(q.query_id) for _, q in pairs}
    old = {i.rsplit("@", 1)[0] for i in existing_ids(out)}
    extra = sorted(old - chosen)
    if extra:
        raise InputError(
            f"{_SPELL.lead('out')} {str(out)!r} holds rows of {len(extra)} questions this run "
            f"does not select (e.g. {extra[0]!r}): it was written with another --limit or --first "
            f"(--limit N now spreads over the conversations; --first N takes the first N "
            f"questions, as --limit did before). Rerun with the selection that wrote it to "
            f"resume, or choose a new {_SPELL('out')}."
        )


class _Reported:
    """The bar's two calls made on a ``progress(done, total, note)`` callback instead."""

    def __init__(self, report: Callable[[int, int, str], object], total: int):
        self.report, self.total, self.n, self.note = report, total, 0, ""
        report(0, total, "")

    def update(self, k: int) -> None:
        self.n += k
        self.report(self.n, self.total, self.note)

    def set_postfix_str(self, note: str, refresh: bool = True) -> None:
        self.note = note
        self.report(self.n, self.total, note)

    def close(self) -> None:
        pass


def _progress_bar(job: PairJob, total: int, progress):
    if not progress:
        return None
    if callable(progress):
        return _Reported(progress, total)
    from tqdm import tqdm

    # disable=None: no "\r" frames into a file or a pipe (issue 48)
    return tqdm(total=total, desc=f"pair {job.dataset}", unit="q", file=sys.stderr, disable=None)
