"""Retrieval recall at k on LoCoMo, retrievers side by side: the analysis of
``python -m experiments.retriever_recall`` (options and outputs in its docstring)."""

from __future__ import annotations

import argparse
import sys

from paper_checks.studies.scripts._args import locomo_file, numbers, write_results

GRANULARITIES = ("session", "turn")


def table(summary: dict) -> str:
    lines = []
    for gran, by_ret in summary.items():
        ks = next(iter(by_ret.values()))["k"]
        lines += [
            f"\n{gran}s: recall at k (mean over questions [95% t over conversations])\n",
            "| retriever | " + " | ".join(f"k = {k}" for k in ks) + " |",
            "|---|" + "---|" * len(ks),
        ]
        for name, s in by_ret.items():
            cells = [
                f"{m:.3f} [{lo:.3f}, {hi:.3f}]"
                for m, lo, hi in zip(s["mean"], s["lower"], s["upper"])
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
            if "minus_bm25" in s:
                d = s["minus_bm25"]
                cells = [
                    f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"
                    for m, lo, hi in zip(d["mean"], d["lower"], d["upper"])
                ]
                lines.append(f"| {name} − bm25 | " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(f"{gran}s, recall at k = {ks[-1]} by gold type:")
        for name, s in by_ret.items():
            per = ", ".join(f"{t} {v[-1]:.3f}" for t, v in s["by_type"].items())
            lines.append(f"- {name}: {per}")
    return "\n".join(lines) + "\n"


def main(doc: str | None, argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.retriever_recall", description=doc)
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--data", help="locomo10.json (default $RETCON_DATA_DIR/locomo10.json)")
    p.add_argument(
        "--retrievers",
        default="bm25,hashed-tfidf,sentence-transformers,sentence-transformers@max-turn",
    )
    p.add_argument("--session-k", default="1,2,4,8")
    p.add_argument("--turn-k", default="5,10,20,40")
    p.add_argument("--granularity", choices=(*GRANULARITIES, "both"), default="both")
    args = p.parse_args(argv)

    from oas.real import load_locomo, recall_at_k, recall_at_k_summary
    from retcon.output import check_out_dir

    ks = {
        "session": numbers("--session-k", args.session_k, int),
        "turn": numbers("--turn-k", args.turn_k, int),
    }
    out = check_out_dir("--out", args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = locomo_file(args.data)
    conversations = load_locomo(data).conversations
    grans = GRANULARITIES if args.granularity == "both" else (args.granularity,)
    cells: dict = {}
    for gran in grans:
        cells[gran] = {}
        for name in args.retrievers.split(","):
            if name.endswith("@max-turn") and gran != "session":
                continue
            sys.stderr.write(f"{gran} {name}\n")
            cells[gran][name] = recall_at_k(conversations, name, gran, ks[gran])
    summary = recall_at_k_summary(cells)
    write_results("retriever_recall", args, out, summary, table(summary), seed=None)
    return 0
