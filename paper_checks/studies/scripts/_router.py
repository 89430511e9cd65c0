"""Deployable routers end to end (LoCoMo, simulation, the router rule's error rates, the top-k
sweep): the analysis of ``python -m experiments.end_to_end_router`` (options and outputs in its
docstring)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import jax
import numpy as np

from oas import RETRIEVAL_FEATURE_NAMES, read_paired, simulate_paired
from oas.real import (
    load_locomo,
    loco_deployable,
    locomo_retrieval_features,
    make_embedder,
    topk_sweep,
)
from paper_checks.studies._router_oc import router_rule_characteristics
from paper_checks.studies.scripts._args import locomo_file, numbers, write_results
from retcon.errors import InputError
from retcon.output import check_out_dir
from sim import load_scenario

RECALLS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)


def _log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def _fmt(g: dict) -> str:
    return f"{g['point']:+.3f} [{g['lower']:+.3f}, {g['upper']:+.3f}]"


def locomo(
    key, e2e_path, oracle_path, data_path, *, theory: bool = True, retrieval: dict | None = None
) -> dict:
    """The LoCoMo comparison (see the module docstring); ``retrieval`` holds the pairing run's
    ``granularity``, ``retriever``, ``top_k`` and ``embedder`` (a name) when not the defaults."""
    e2e = read_paired(e2e_path)
    conversations = load_locomo(data_path).conversations
    opts = dict(retrieval or {})
    if opts.get("embedder"):
        opts["embedder"] = make_embedder(opts["embedder"])
    extra = locomo_retrieval_features(e2e, conversations, **opts)
    recall = np.asarray(e2e.meta["meta_retrieval_recall_cluster"], dtype=np.float64)
    oracle = read_paired(oracle_path) if oracle_path else None
    out = {
        "end_to_end": loco_deployable(
            jax.random.fold_in(key, 0),
            e2e,
            extra,
            recall,
            oracle_data=oracle,
            theory=theory,
            progress=_log,
        ),
        "recall_feature_correlation": {
            name: float(np.corrcoef(extra[:, j], recall)[0, 1])
            for j, name in enumerate(RETRIEVAL_FEATURE_NAMES[:3])  # features 12-14
        },
    }
    if oracle is not None:
        out["oracle_protocol"] = loco_deployable(
            jax.random.fold_in(key, 1),
            oracle,
            np.zeros((oracle.n, 3)),
            np.ones(oracle.n),
            feature_groups={"base": ()},
            theory=theory,
            progress=_log,
        )
    return out


def simulation(
    key, *, recalls=RECALLS, n_instances: int = 8000, n_budgets: int = 8, theory: bool = True
) -> dict:
    """Gain over best-fixed against recall in ``locomo-like`` for each router (LOGO, 10 groups)."""
    sc = load_scenario("locomo-like")
    budgets = np.geomspace(sc.budgets[0], sc.budgets[-1], n_budgets)
    k_draw, k_score = jax.random.split(key)
    cells = []
    for i, r in enumerate(recalls):
        s = dataclasses.replace(sc, retriever=dataclasses.replace(sc.retriever, recall=float(r)))
        data = simulate_paired(k_draw, s, n_instances, budgets=budgets)
        _, q = np.unique(np.asarray(data.query_id).astype(str), return_inverse=True)
        data = data._replace(group_id=np.asarray([f"g{v % 10}" for v in q], dtype=object))
        m = data.meta
        extra = np.stack(
            [np.asarray(m[c], dtype=np.float64) for c in ("meta_score_margin", "meta_score_mass")]
            + [np.asarray(m["meta_overlap_count"], dtype=np.float64)],
            axis=1,
        )
        rec = np.asarray(m["meta_retrieval_recall_cluster"], dtype=np.float64)
        res = loco_deployable(
            jax.random.fold_in(k_score, i), data, extra, rec, theory=theory, progress=_log
        )
        _log(f"recall {r:g} done")
        cells.append({"recall": float(r), **res})
    return {"recalls": list(recalls), "cells": cells}


def rule_oc(key, out_dir: Path, *, signals, n_datasets: int, n_questions: int = 150) -> list:
    """The rule's error rates (module docstring); records cached in ``out_dir/rule_oc.jsonl``."""
    cache = Path(out_dir) / "rule_oc.jsonl"
    done = {}
    if cache.is_file():
        kept = []
        for line in cache.read_text().splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:  # a line cut by an interruption
                continue
            done[(r["signal"], r["index"])] = r
            kept.append(line + "\n")
        text = cache.read_text()
        if text and not text.endswith("\n"):  # drop the cut tail, so the next record starts a line
            tmp = cache.with_name(cache.name + ".tmp")
            tmp.write_text("".join(kept))
            tmp.replace(cache)

    def record(r: dict) -> None:
        with cache.open("a") as f:
            f.write(json.dumps(r) + "\n")
        _log(
            f"signal {r['signal']:g} data set {r['index'] + 1}/{n_datasets}: "
            f"deployable {r['deployable']['verdict']}, anchored {r['anchored']['verdict']}"
        )

    return router_rule_characteristics(
        key, signals, n_datasets=n_datasets, n_questions=n_questions, progress=record, done=done
    )


def tables(res: dict) -> str:
    lines = []
    lo = res.get("locomo")
    if lo:
        e, o = lo["end_to_end"], lo.get("oracle_protocol")
        lines += [
            "| policy | gain over best-fixed [95% t, 10 conversations] | accuracy | share of "
            "headroom |",
            "|---|---|---|---|",
        ]
        if o:
            lines.append(
                f"| oracle protocol: ridge OAS (base 11) | {_fmt(o['gain']['base'])} | "
                f"{o['accuracy']['base']:.3f} | {o['headroom_share']['base']:+.2f} |"
            )
            if "theory" in o["gain"]:
                lines.append(
                    f"| oracle protocol: theory router | {_fmt(o['gain']['theory'])} | "
                    f"{o['accuracy']['theory']:.3f} | {o['headroom_share']['theory']:+.2f} |"
                )
            lines.append(
                f"| oracle protocol: oracle selector | {_fmt(o['gain']['oracle'])} | "
                f"{o['accuracy']['oracle']:.3f} | 1 |"
            )
        for p, g in e["gain"].items():
            if p == "best-fixed":
                continue
            lines.append(
                f"| end to end: {p} | {_fmt(g)} | {e['accuracy'][p]:.3f} | "
                f"{e['headroom_share'][p]:+.2f} |"
            )
        lines.append(f"| end to end: best-fixed | 0 | {e['accuracy']['best-fixed']:.3f} | 0 |")
        sel = [s["selected"] for s in e["selected_groups"]]
        lines.append("")
        lines.append(f"Feature group selected in each outer fold: {', '.join(sel)}.")
        lines.append(
            "Correlation of features 12-14 with the cluster recall (rows): "
            + ", ".join(f"{k} {v:+.3f}" for k, v in lo["recall_feature_correlation"].items())
        )
    oc = res.get("rule_oc")
    if oc:
        lines += [
            "",
            "| signal | policy | YES | NO | UNDECIDED | coverage | mean truth | mean gain | "
            "oracle headroom | data sets |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in oc:
            lines.append(
                f"| {c['signal']:g} | {c['policy']} | {c['yes']:.1%} | {c['no']:.1%} | "
                f"{c['undecided']:.1%} | {c['coverage']:.1%} | {c['mean_truth']:+.4f} | "
                f"{c['mean_gain']:+.4f} | {c['oracle_headroom']:+.3f} | {c['n_datasets']} |"
            )
    tk = res.get("topk")
    if tk:
        lines += [
            "",
            "| run | recall (cluster) | recall packed @ 32 / 512 / 2048 | crossover merge | "
            "crossover abstract | best-fixed acc | ridge (11) - best-fixed | deployable - "
            "best-fixed | anchored - best-fixed | oracle - best-fixed |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for lab, r in tk["runs"].items():
            rp = r["recall_packed"]
            cm, ca = r["crossover"]["merge"], r["crossover"]["abstract"]

            def cross(c):
                b, lo, hi = c.get("crossover_budget"), c.get("lower"), c.get("upper")
                if b is None:
                    return "none"
                return f"{b:.0f} [{lo:.0f}, {hi:.0f}]"

            g = r["gain"]
            lines.append(
                f"| {lab} | {r['recall_cluster']:.3f} | {rp.get('32', float('nan')):.3f} / "
                f"{rp.get('512', float('nan')):.3f} / {rp.get('2048', float('nan')):.3f} | "
                f"{cross(cm)} | {cross(ca)} | {r['accuracy']['best-fixed']:.3f} | "
                f"{_fmt(g['base'])} | {_fmt(g['deployable'])} | {_fmt(g['anchored'])} | "
                f"{_fmt(g['oracle'])} |"
            )
        for gran, sel in tk["selected"].items():
            lines.append("")
            lines.append(
                f"k chosen in the training folds ({gran}): picked {', '.join(sel['picked'])}; "
                f"accuracy best-fixed {sel['accuracy']['best-fixed']:.3f}, deployable "
                f"{sel['accuracy']['deployable']:.3f}; against each fixed k: "
                + "; ".join(f"{k} {_fmt(v)}" for k, v in sel["versus"].items())
            )
    sm = res.get("simulation")
    if sm:
        pols = [p for p in sm["cells"][0]["gain"] if p != "best-fixed"]
        lines += ["", "| recall | " + " | ".join(pols) + " |", "|---|" + "---|" * len(pols)]
        for c in sm["cells"]:
            lines.append(
                f"| {c['recall']:g} | " + " | ".join(_fmt(c["gain"][p]) for p in pols) + " |"
            )
    return "\n".join(lines) + "\n"


def main(doc: str | None, argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.end_to_end_router", description=doc)
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--e2e", help="end-to-end paired rows (LoCoMo)")
    p.add_argument("--oracle", help="oracle-protocol paired rows of the same questions")
    p.add_argument("--data", help="locomo10.json (default $RETCON_DATA_DIR/locomo10.json)")
    p.add_argument("--sim", action="store_true", help="run the simulation sweep over recall")
    p.add_argument("--recalls", default=",".join(map(str, RECALLS)))
    p.add_argument("--instances", type=int, default=8000)
    p.add_argument("--no-theory", action="store_true", help="skip the theory router")
    p.add_argument("--seed", type=int, default=0)
    # The retrieval settings of the --e2e pairing run (features 12-14 rerun its retriever).
    p.add_argument("--granularity", default="session", choices=("session", "turn"))
    p.add_argument("--retriever", default="bm25", choices=("bm25", "embedding"))
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--embedder", default=None, help="the run's --embedder (--retriever embedding)")
    p.add_argument(
        "--topk",
        action="append",
        default=[],
        metavar="LABEL=FILE",
        help="a --top-k sweep run (label s<k> or t<k>); repeat",
    )
    p.add_argument("--rule-oc", action="store_true", help="measure the router rule's error rates")
    p.add_argument("--signals", default="0,0.03,0.05", help="--rule-oc worlds (0: the null)")
    p.add_argument("--datasets", type=int, default=100, help="--rule-oc data sets per world")
    args = p.parse_args(argv)

    if not args.e2e and not args.sim and not args.rule_oc and not args.topk:
        raise InputError("give --e2e FILE (LoCoMo), --topk, --sim and/or --rule-oc.")
    out = check_out_dir("--out", args.out)
    out.mkdir(parents=True, exist_ok=True)
    key = jax.random.key(args.seed)
    res: dict = {}
    if args.e2e:
        data = locomo_file(args.data)
        retrieval = {
            "granularity": args.granularity,
            "retriever": args.retriever,
            "top_k": args.top_k,
            "embedder": args.embedder
            or ("hashed-tfidf" if args.retriever == "embedding" else None),
        }
        res["locomo"] = locomo(
            jax.random.fold_in(key, 0),
            args.e2e,
            args.oracle,
            data,
            theory=not args.no_theory,
            retrieval=retrieval,
        )
    if args.sim:
        res["simulation"] = simulation(
            jax.random.fold_in(key, 1),
            recalls=numbers("--recalls", args.recalls),
            n_instances=args.instances,
            theory=not args.no_theory,
        )
    if args.topk:
        runs = {}
        for item in args.topk:
            label, sep, path = item.partition("=")
            if not sep or label[:1] not in ("s", "t") or not label[1:].isdigit():
                raise InputError(
                    f"--topk must be LABEL=FILE with LABEL s<k> or t<k> (e.g. s4=e2e.jsonl); "
                    f"got {item!r}."
                )
            runs[label] = path
        data = locomo_file(args.data)
        res["topk"] = topk_sweep(jax.random.fold_in(key, 3), runs, data, progress=_log)
    if args.rule_oc:
        res["rule_oc"] = rule_oc(
            jax.random.fold_in(key, 2),
            out,
            signals=numbers("--signals", args.signals),
            n_datasets=args.datasets,
        )
    write_results("end_to_end_router", args, out, res, tables(res), seed=args.seed)
    return 0
