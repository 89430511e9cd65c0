"""A ``retcon pair`` run: load, build instances, write paired data resumably, summarize.

Output: ``--out`` (``.jsonl`` or ``.csv``) through ``oas._paired.PairedWriter`` (rows appended to
``<out>.partial``, renamed on completion), and a sidecar ``<out>.meta.json`` (options, versions,
load report, summary). A rerun with the same options skips the rows already written; a rerun with
different options is refused, so one file never mixes two protocols.

References: MODEL §8-9; docs/paired-data.md.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from oas.real._checks import check_budgets, check_choice
from retcon.errors import InputError

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

    def __post_init__(self):
        from oas.real._pair import DEFAULT_BUDGETS

        check_choice("dataset", self.dataset, ("locomo", "longmemeval"))
        check_choice("--operators", self.operators, ("dataset", "extractive", "llm"))
        check_choice("--reader", self.reader, ("lexical", "sentence", "llm"))
        check_choice("--llm-judge", self.llm_judge, ("lexical", "llm"))
        object.__setattr__(self, "budgets", check_budgets(self.budgets or DEFAULT_BUDGETS))
        if self.limit is not None and self.limit <= 0:
            raise InputError(f"--limit must be a positive integer; got {self.limit}.")
        if not 0.0 < self.sentence_threshold <= 1.0:
            raise InputError(
                f"--sentence-threshold must be in (0, 1]; got {self.sentence_threshold:g}."
            )
        if self.dataset == "longmemeval" and self.operators == "dataset":
            raise InputError(
                "--operators dataset needs LoCoMo's own observations and session summaries; "
                "LongMemEval has none. Use --operators extractive or llm."
            )
        suffix = Path(self.out).suffix.lower()
        if suffix not in (".jsonl", ".ndjson", ".csv"):
            raise InputError(
                f"--out must end in .jsonl or .csv (resumable formats); got {self.out!r}."
            )

    def protocol(self) -> dict:
        d = asdict(self)
        p = {k: d[k] for k in _PROTOCOL_FIELDS}
        p["budgets"] = list(p["budgets"])
        if "llm" in (self.operators, self.reader):
            # The model, not its address, defines the outcomes: the same model served elsewhere
            # resumes (the LLM cache key leaves the address out too).
            p["llm_model"] = self.llm.get("model")
        return p


def _load(job: PairJob):
    from oas.real._fetch import resolve_data

    path = resolve_data(job.dataset, job.data)
    if job.dataset == "locomo":
        from oas.real._locomo import load_locomo

        return path, load_locomo(path, strict=job.strict)
    from oas.real._longmemeval import load_longmemeval

    return path, load_longmemeval(path, include_abstention=job.include_abstention)


def _backends(job: PairJob):
    from oas.real._embed import make_embedder
    from oas.real._operators import make_operators
    from oas.real._readers import make_reader
    from oas.real._text import make_tokenizer

    llm = {k: v for k, v in job.llm.items() if v is not None}
    operators = make_operators(job.operators, **(llm if job.operators == "llm" else {}))
    if job.reader == "llm":
        reader = make_reader("llm", judge=job.llm_judge, **llm)
    elif job.reader == "sentence":
        reader = make_reader("sentence", threshold=job.sentence_threshold)
    else:
        reader = make_reader(job.reader)
    return operators, reader, make_tokenizer(job.tokenizer), make_embedder(job.embedder)


def _check_resume(job: PairJob, meta_path: Path, out: Path) -> None:
    if not meta_path.is_file():
        return
    try:
        old = json.loads(meta_path.read_text(encoding="utf-8")).get("config", {})
    except (json.JSONDecodeError, OSError):
        return
    partial = Path(f"{out}.partial")
    if not (out.is_file() or partial.is_file()):
        return
    new = job.protocol()
    diff = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    if diff:
        k = diff[0]
        raise InputError(
            f"--out {str(out)!r} was written with {k}={old.get(k)!r}; this run has "
            f"{k}={new.get(k)!r}. Rerun with the same options to resume, or choose a new --out."
        )


def run_pair_job(job: PairJob, *, progress: bool = True) -> dict:
    """Run ``retcon pair``; returns the JSON summary (also written to ``<out>.meta.json``).

    Returns:
      dict with ``out``, ``n_rows``, ``n_written``, ``n_resumed``, the load report (``load``),
      ``protocol``, compress ratios of the operators, and ``summarize``'s accuracy / delta /
      crossover tables.

    References: MODEL §6, §8, §9.
    """
    import jax
    import numpy as np

    from oas._paired import PairedWriter, iter_raw_rows
    from oas.real._pair import ConversationContext, PairConfig, iter_queries, query_rows, summarize
    from retcon.output import sidecar, write_json_atomic

    out = Path(job.out)
    meta_path = Path(f"{out}.meta.json")
    _check_resume(job, meta_path, out)
    data_path, loaded = _load(job)
    operators, reader, tokenizer, embedder = _backends(job)
    assert job.budgets is not None  # PairJob.__post_init__ fills in the default grid
    config = PairConfig(job.budgets, job.granularity, job.order, job.packing)
    pairs = list(iter_queries(loaded.conversations, job.limit))
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
    )
    write_json_atomic(meta_path, meta)

    partial = Path(f"{out}.partial")
    if out.is_file() and not partial.is_file():
        shutil.copyfile(out, partial)  # resume on top of a finished file (e.g. a larger --limit)
    n_written = 0
    contexts: dict[str, ConversationContext] = {}
    with PairedWriter(out, packing=job.packing) as writer:
        done = set(writer.ids)
        from tqdm import tqdm

        bar = tqdm(
            pairs, desc=f"pair {job.dataset}", unit="q", disable=not progress, file=sys.stderr
        )
        for conv, query in bar:
            if conv.conversation_id not in contexts:
                contexts = {
                    conv.conversation_id: ConversationContext(conv, job.granularity, embedder)
                }
            rows = query_rows(
                query,
                contexts[conv.conversation_id],
                operators=operators,
                reader=reader,
                config=config,
                tokenizer=tokenizer,
                skip_ids=done,
            )
            for row in rows:
                writer.write(row)
                n_written += 1
        n_resumed = len(done)
        writer.finalize()

    rows = [raw for _, raw, _ in iter_raw_rows(out)]
    summary = summarize(rows, key=jax.random.PRNGKey(job.seed))
    ratios = {}
    seen = {}
    for r in rows:
        seen.setdefault(r["query_id"], r)
    for action in ("merge", "abstract", "rewrite"):
        rho = np.array(
            [
                float(r[f"meta_tokens_{action}"]) / float(r["meta_cluster_tokens"])
                for r in seen.values()
            ]
        )
        ratios[action] = {
            "median": float(np.median(rho)),
            "p5": float(np.percentile(rho, 5)),
            "p95": float(np.percentile(rho, 95)),
        }
    summary.update(
        {
            "out": str(out),
            "n_written": n_written,
            "n_resumed": n_resumed,
            "load": loaded.report._asdict(),
            "protocol": job.protocol(),
            "compress_ratio": ratios,
        }
    )
    summary["load"]["dropped"] = list(summary["load"]["dropped"])
    calls = {}
    for part, obj in (("operators", operators), ("reader", reader)):
        stats = getattr(obj, "stats", None)  # the llm backend counts cache hits and requests
        if stats is not None and hasattr(stats, "_asdict"):
            calls[part] = stats._asdict()
    if calls:
        summary["llm_calls"] = calls
    meta["summary"] = summary
    write_json_atomic(meta_path, meta)
    return summary
