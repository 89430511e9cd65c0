"""``retcon data fetch|path`` and ``retcon pair locomo|longmemeval``.

``register(subparsers)`` adds ``data``; ``register_pair(pair_subparsers)`` adds the two datasets
under the ``pair`` parser that ``oas/cli.py`` creates. Heavy imports happen inside ``run_*``.

References: MODEL §8-9.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from retcon.commands.common import add_common, add_llm_options, add_moved_out, emit, list_type
from retcon.commands.common import llm_options as llm_flags
from retcon.vocab import LLM_JUDGES, READERS
from theory import PACKINGS

_LLM_HELP = "OpenAI-compatible endpoint for --operators/--reader llm"


def register(subparsers) -> None:
    """Add ``retcon data fetch NAME`` and ``retcon data path NAME``."""

    data = subparsers.add_parser(
        "data",
        help="get and locate real datasets (LoCoMo)",
        description="Download the pinned LoCoMo file into the data cache "
        "($RETCON_DATA_DIR, else ~/.cache/retcon) and check its sha256.",
    )
    sub = data.add_subparsers(dest="data_command", metavar="ACTION")
    fetch = sub.add_parser(
        "fetch", help="download a dataset into the cache (no download if present and valid)"
    )
    fetch.add_argument("name", choices=["locomo", "locomo-audit"])
    fetch.add_argument("--url", default=None, help="override the pinned address (mirror, file://)")
    fetch.add_argument("--sha256", default=None, help="override the pinned checksum (with --url)")
    add_common(fetch, out=False, seed=False)
    fetch.set_defaults(func=run_fetch)
    path = sub.add_parser(
        "path", help="print where a dataset lives in the cache and whether it is valid"
    )
    path.add_argument("name", choices=["locomo", "locomo-audit"])
    add_common(path, out=False, seed=False)
    path.set_defaults(func=run_path)
    data.set_defaults(func=lambda args: (data.print_help(sys.stdout), 2)[1])


def register_pair(pair_subparsers) -> None:
    """Add ``locomo`` and ``longmemeval`` under ``retcon pair``."""
    for name, default_ops in (("locomo", "dataset"), ("longmemeval", "extractive")):
        p = pair_subparsers.add_parser(
            name,
            help=f"paired data from {'LoCoMo' if name == 'locomo' else 'LongMemEval'}",
            description="One row per question x budget with the outcomes of ret, merge, abstract and "
            "rewrite under the oracle-evidence protocol (docs/real-data.md).",
        )
        _add_pair_options(p, name, default_ops)
        p.set_defaults(func=run_pair, dataset=name)


def _add_pair_options(p: argparse.ArgumentParser, name: str, default_ops: str) -> None:

    p.add_argument(
        "--data",
        metavar="PATH",
        default=None,
        help="dataset file"
        + (
            " (default: the cache; see `retcon data fetch locomo`)"
            if name == "locomo"
            else " (required: longmemeval_oracle.json, _s or _m)"
        ),
    )
    p.add_argument(
        "--output",
        metavar="FILE",
        required=True,
        help="paired-data file (.jsonl or .csv); resumable, written atomically",
    )

    add_moved_out(p, "--output FILE")
    p.add_argument(
        "--operators",
        choices=["dataset", "extractive", "llm"],
        default=default_ops,
        help=f"operator backend (default {default_ops})",
    )
    p.add_argument(
        "--reader",
        choices=READERS,
        default="lexical",
        help="reader (default lexical)",
    )
    p.add_argument(
        "--budgets",
        type=list_type(int, what="budgets in tokens (integers)", example="32,64"),
        default=None,
        help="budgets in tokens, comma or space separated (default: 4 per octave from 32 to 2048)",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="about N questions spread over the conversations: the first ceil(N / G) of each of "
        "the G conversations, so every conversation stays a group (as paper-checks --limit); "
        "N < G: one of each of the first N conversations",
    )
    p.add_argument(
        "--first",
        type=int,
        default=None,
        metavar="N",
        help="only the first N questions of the file (what --limit meant before: one or two "
        "conversations of LoCoMo)",
    )
    p.add_argument(
        "--no-structure",
        action="store_true",
        help="leave the evidence_structure column out of the rows (smaller files; "
        "retcon identify and the magnitude checks need it)",
    )
    p.add_argument(
        "--granularity",
        choices=["session", "turn"],
        default="session",
        help="cluster = evidence sessions (default) or evidence turns",
    )
    p.add_argument(
        "--order",
        choices=["chronological", "bm25"],
        default="chronological",
        help="retriever order of the packed records (default chronological)",
    )
    p.add_argument(
        "--packing",
        choices=PACKINGS,
        default="cut",
        help="cut (default): prefix packing with the last record cut to the budget; "
        "prefix: stop at the first record that does not fit; skip: skip it, try the next",
    )
    p.add_argument(
        "--tokenizer",
        default="regex",
        help="regex (default, no download), alnum (the paper's [A-Za-z0-9]+ count) or "
        "tiktoken[:ENCODING]",
    )
    p.add_argument(
        "--design",
        choices=["ours", "paper"],
        default="ours",
        help="paper: the paper's controlled design (MODEL §11; docs/paper-protocol.md): LoCoMo's "
        "75-question stratified sample (seed 20260716), budgets 16-128 (LongMemEval 32-256), "
        "evidence turns packed cheapest-first, alphanumeric tokens, generated records capped at "
        "the budget, the paper's features 3 and 6",
    )
    p.add_argument(
        "--embedder",
        default="hashed-tfidf",
        help="hashed-tfidf (default, no download), sentence-transformers[:MODEL], or "
        "openai:MODEL (an OpenAI-compatible /v1/embeddings endpoint at $RETCON_EMBED_BASE_URL)",
    )
    p.add_argument(
        "--sentence-threshold",
        type=float,
        default=0.5,
        help="sentence reader: gold-answer token recall counted correct (default 0.5)",
    )
    if name == "locomo":
        p.add_argument(
            "--strict",
            action="store_true",
            help="error on any evidence id that names no turn or had to be repaired",
        )
        p.add_argument(
            "--locomo-audit",
            metavar="PATH",
            default=None,
            help="apply the LoCoMo audit's errors.json (dial481/locomo-audit); 'cache' for the "
            "copy `retcon data fetch locomo-audit` put in the data cache (docs/real-data.md)",
        )
        p.add_argument(
            "--audit-mode",
            default=None,
            metavar="MODES",
            help="with --locomo-audit: comma-separated drop|correct|cite (default drop,cite): "
            "drop the answer errors, or correct them; cite: use the corrected evidence",
        )
    else:
        p.add_argument(
            "--include-abstention",
            action="store_true",
            help="keep the _abs (abstention) questions (excluded by default)",
        )
    g = p.add_argument_group("llm", _LLM_HELP)
    add_llm_options(g)
    g.add_argument(
        "--llm-judge",
        choices=LLM_JUDGES,
        default=None,
        help="--reader llm: judge its answer by the lexical rule (default) or by the LLM (yes/no); "
        "an LLM judge is checked on wrong answers (docs/llm.md, 'Checking the judge')",
    )
    g.add_argument(
        "--realisations",
        type=int,
        default=1,
        metavar="R",
        help="label realisations (MODEL §11; the paper: 3): rerun every LLM call R times with "
        "seeds 0 .. R-1 (distinct cache keys) and average the outcomes within question; needs "
        "--operators llm or --reader llm (default 1)",
    )
    g.add_argument(
        "--judge-threshold",
        type=float,
        default=None,
        metavar="RATE",
        help="--llm-judge llm: the false-acceptance rate on wrong answers above which the judge is "
        "flagged, on stderr and in the report (default 0.1)",
    )
    e = p.add_argument_group("end to end", "retrieved evidence and a predicted query type")
    e.add_argument(
        "--protocol",
        choices=["oracle", "end-to-end"],
        default="oracle",
        help="oracle (default): the cluster is the gold evidence; end-to-end: the top units a "
        "retriever ranks over the whole conversation (docs/end-to-end.md)",
    )
    e.add_argument(
        "--retriever",
        choices=["bm25", "embedding"],
        default=None,
        help="end-to-end ranking: bm25 (default) or cosine under --embedder",
    )
    e.add_argument(
        "--top-k",
        type=int,
        default=None,
        metavar="K",
        help="end-to-end: units retrieved (default 4 sessions or 40 turns)",
    )
    e.add_argument(
        "--type-source",
        choices=["predicted", "gold"],
        default=None,
        help="end-to-end: the type feature from the conversation-disjoint classifier (default) "
        "or the gold type",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_common(p, out=False)


def run_fetch(args) -> int:
    from oas.real import fetch

    got = fetch(args.name, url=args.url, sha256=args.sha256)
    info = {
        "name": args.name,
        "path": str(got.path),
        "downloaded": got.downloaded,
        "sha256": got.sha256,
    }
    how = "downloaded" if got.downloaded else "already in the cache"
    emit(args, info, f"{args.name}: {got.path} ({how}; sha256 ok)")
    return 0


def run_path(args) -> int:
    from oas.real import DATASETS, cached_path, sha256_of

    path = cached_path(args.name)
    present = path.is_file()
    valid = present and sha256_of(path) == DATASETS[args.name]["sha256"]
    info = {"name": args.name, "path": str(path), "present": present, "sha256_ok": bool(valid)}
    emit(
        args,
        info,
        f"{path} ({'valid' if valid else 'present, wrong sha256' if present else 'absent'})",
    )
    return 0 if valid else 1


def _pair_text(summary: dict) -> str:
    """The text report of ``retcon pair locomo|longmemeval``."""
    from oas.real import format_table

    out = []
    rep = summary["load"]
    out.append(
        f"{summary['output']}: {summary['n_rows']} rows, {summary['n_queries']} questions, "
        f"{summary['n_groups']} conversations = groups ({summary['n_written']} written now, "
        f"{summary['n_resumed']} resumed)."
    )
    out.append(
        f"excluded: {rep['n_excluded']} ({rep['excluded_reason']}); evidence ids dropped "
        f"{rep['n_evidence_dropped']}, repaired {rep['n_evidence_repaired']}; questions without "
        f"evidence {rep['n_no_evidence']}."
    )
    out.append(format_table(summary))
    if "retrieval_recall" in summary:
        rr = summary["retrieval_recall"]
        out.append(
            "retrieval recall (packed ret)"
            + "".join(f"{v:8.3f}" for v in rr["packed"])
            + f"; whole cluster {rr['cluster']:.3f}"
        )
    if "judge_check" in summary:
        jc = summary["judge_check"]
        out.append(jc["line"])
        out.extend(jc["agreement_lines"])
    if "type_classifier" in summary:
        tc = summary["type_classifier"]
        out.append(
            f"type classifier (leave-one-conversation-out): accuracy {tc['accuracy']:.3f}; "
            f"confusion (rows gold {tc['classes']}): {tc['confusion']}"
        )
    return "\n".join(out)


def _refuse_ignored_options(args) -> None:
    """An option the chosen protocol or reader would ignore is an error, not a silent no-op."""
    from retcon.errors import InputError

    if args.protocol != "end-to-end":
        for flag, value in (
            ("--top-k", args.top_k),
            ("--retriever", args.retriever),
            ("--type-source", args.type_source),
        ):
            if value is not None:
                raise InputError(
                    f"{flag} applies only to --protocol end-to-end (the oracle protocol's cluster "
                    f"is the gold evidence); drop {flag}, or add --protocol end-to-end."
                )
    if args.llm_judge is not None and args.reader != "llm":
        raise InputError(
            f"--llm-judge judges the llm reader's answers; it needs --reader llm (got --reader "
            f"{args.reader})."
        )
    if args.judge_threshold is not None and (args.reader, args.llm_judge) != ("llm", "llm"):
        raise InputError(
            "--judge-threshold flags a lenient LLM judge; it needs --reader llm --llm-judge llm."
        )


def _audit_options(args) -> dict:
    """``--locomo-audit`` (a path, or ``cache``) and ``--audit-mode`` as PairJob fields."""
    from retcon.errors import InputError

    audit = getattr(args, "locomo_audit", None)
    mode = getattr(args, "audit_mode", None)
    if audit is None:
        if mode is not None:
            raise InputError("--audit-mode needs --locomo-audit PATH (the audit's errors.json).")
        return {}
    if audit == "cache":
        from oas.real import cached_path

        audit = str(cached_path("locomo-audit"))
        if not Path(audit).is_file():
            raise InputError(
                f"--locomo-audit cache: the audit is not in the data cache ({audit}); run "
                f"`retcon data fetch locomo-audit` or pass --locomo-audit PATH."
            )
    # an empty --audit-mode '' is the library's refusal, not the default
    return {"locomo_audit": audit, "audit_mode": "drop,cite" if mode is None else mode}


def run_pair(args) -> int:
    from retcon.errors import InputError
    from retcon.output import check_out_file

    check_out_file(
        "--output",
        args.output,
        inputs=[("--data", args.data)],
    )
    if args.data is not None and not Path(args.data).exists():  # before JAX is imported
        raise InputError(f"--data {args.data!r}: no such file.")
    from oas.real import PairJob, run_pair_job

    _refuse_ignored_options(args)

    llm = llm_flags(args)  # checks --llm-cache
    if "llm" in (args.operators, args.reader) and os.environ.get("RETCON_LLM_CHECK", "1") != "0":
        from oas.real import preflight, resolve_endpoint

        # the endpoint probed before the first call (docs/llm.md); RETCON_LLM_CHECK=0 skips it
        for line in preflight(resolve_endpoint(**llm), seed=args.realisations > 1)[1]:
            print(f"retcon pair: warning: {line}", file=sys.stderr)
    job = PairJob(
        dataset=args.dataset,
        data=args.data,
        out=args.output,
        operators=args.operators,
        reader=args.reader,
        budgets=tuple(args.budgets) if args.budgets else None,
        limit=args.limit,
        first=args.first,
        structure=not args.no_structure,
        granularity=args.granularity,
        order=args.order,
        packing=args.packing,
        tokenizer=args.tokenizer,
        embedder=args.embedder,
        sentence_threshold=args.sentence_threshold,
        strict=getattr(args, "strict", False),
        include_abstention=getattr(args, "include_abstention", False),
        llm=llm,
        llm_judge=args.llm_judge or "lexical",
        seed=args.seed,
        pair_protocol=args.protocol,
        retriever=args.retriever or "bm25",
        top_k=args.top_k,
        type_source=args.type_source or "predicted",
        design=args.design,
        realisations=args.realisations,
        **_audit_options(args),
        **({} if args.judge_threshold is None else {"judge_threshold": args.judge_threshold}),
    )
    if args.dataset == "locomo" and args.data is not None:
        # an odd file is refused here in one line, not after the announcement (0.1 s to read)
        from oas.real import check_locomo_stream, load_locomo

        try:
            convs = load_locomo(args.data).conversations
        except InputError as e:
            raise InputError(f"--data: {e}") from None
        check_locomo_stream(convs, args.data, user="pair locomo")
    if job.locomo_audit is not None:  # the audit's file read up front too (it is small)
        from oas.real import load_audit

        load_audit(job.locomo_audit)
    from retcon.commands import _progress

    which = (
        f"the first {args.first} questions"
        if args.first is not None
        else f"about {args.limit} questions spread over the conversations"
        if args.limit is not None
        else "every question"
    )
    _progress.announce(
        args,
        f"loading {args.data or args.dataset}, then pairing {which}; a bar of questions follows",
    )
    with _progress.bar(args, unit="q", desc=f"pair {args.dataset}") as bar:

        def report(done: int, total: int, note: str) -> None:
            bar.update(done, total)
            if note:
                bar.note(note)

        summary = run_pair_job(job, progress=report)
    emit(args, summary, lambda: _pair_text(summary))
    sys.stdout.flush()
    return 0
