"""The numbers behind each figure of ``experiments/``: one assembler per figure, all testable.

Each ``*_data(config, key)`` takes the experiment's config (a dict read from its TOML file) and a
JAX key and returns a JSON-ready dict; ``*_figure(data)`` draws it. The scripts in
``experiments/`` only parse arguments, call these, and write the outputs.

References: MODEL §4-6 (curves, crossover), §5 (Assumption 1), §8 (OAS, calibration).
"""

from __future__ import annotations

import jax
import numpy as np

from oas import (
    argmax_policy,
    calibrate_accuracy,
    calibrate_crc,
    calibrated_policy,
    evaluate,
    group_split,
    length_strata,
    predict_ridge,
)
from paper_checks._config import CheckConfig
from paper_checks._curves import curves_from_paired, evidence_length
from paper_checks._policies import fit_ridge_on, n_folds_for
from paper_checks._types import Estimate, OperatorCurve, SourceCurves
from paper_checks.claims._sources import Workspace
from paper_checks.report._figures import (
    plot_coverage_replacement,
    plot_crossover_vs_length,
    plot_delta_curves,
    plot_harm_tradeoff,
    plot_phase_diagram,
    plot_policy_accuracy,
)
from paper_checks.report._report import plain
from retcon.bootstrap import grouped_bootstrap_mean
from retcon.errors import InputError
from retcon.plots import grid, new_figure, policy_style
from retcon.vocab import OPERATORS
from sim import load_scenario, stress


def _workspace(config: dict, key_seed: int) -> Workspace:
    cfg = CheckConfig(
        sim_queries=int(config.get("queries", 4000)),
        sim_instances=int(config.get("instances", 3000)),
        locomo_limit=config.get("locomo_limit", 500),
        data=config.get("data"),
        n_resamples=int(config.get("n_resamples", 500)),
        readers=tuple(config.get("readers", ("lexical",))),
    )
    return Workspace(cfg, key_seed)


def _source(ws: Workspace, name: str) -> SourceCurves:
    """``theory``, ``sim:<preset>`` or ``locomo:<reader>``."""
    if name == "theory":
        return ws.theory_curves()
    if name.startswith("sim:"):
        return ws.sim_curves(name[4:])
    if name.startswith("locomo:"):
        return ws.real_curves(name[7:])
    raise InputError(f"source must be 'theory', 'sim:<preset>' or 'locomo:<reader>'; got {name!r}.")


def curves_to_dict(s: SourceCurves) -> dict:
    return plain(
        {
            "name": s.name,
            "data": s.data,
            "evidence_length": s.evidence_length,
            "kind": s.kind,
            "operators": {op: c._asdict() for op, c in s.operators.items()},
        }
    )


def curves_from_dict(d: dict) -> SourceCurves:
    ops = {}
    for op, c in d["operators"].items():
        arr = {
            k: np.asarray([np.nan if v is None else v for v in c[k]], float)
            for k in ("budgets", "delta", "lower", "upper", "coverage", "replacement")
        }
        x = c["crossover"]
        cross = Estimate(*(np.nan if x[k] is None else x[k] for k in ("point", "lower", "upper")))
        ops[op] = OperatorCurve(**arr, crossover=cross, status=c["status"])
    return SourceCurves(d["name"], d["data"], ops, d["evidence_length"] or np.nan, d["kind"])


# ---- 1, 2: crossover curves; coverage and replacement ---------------------------------------------


def curves_data(config: dict, seed: int) -> dict:
    """``dU``, coverage, replacement per operator with 95% bands, for each source in ``config["sources"]``."""
    ws = _workspace(config, seed)
    return {
        "sources": [
            curves_to_dict(_source(ws, s)) for s in config.get("sources", ["sim:locomo-like"])
        ]
    }


def crossover_curves_figure(data: dict):
    srcs = [curves_from_dict(d) for d in data["sources"]]
    fig, axes = grid(len(srcs))
    for ax, s in zip(axes, srcs):
        plot_delta_curves(ax, s)
    fig.tight_layout()
    return fig


def coverage_replacement_figure(data: dict):
    srcs = [curves_from_dict(d) for d in data["sources"]]
    fig, axes = new_figure(len(OPERATORS), len(srcs))
    for i, s in enumerate(srcs):
        for j, op in enumerate(OPERATORS):
            plot_coverage_replacement(axes[i * len(OPERATORS) + j], s, op)
    fig.tight_layout()
    return fig


# ---- 3: crossover budget vs evidence length -------------------------------------------------------


def crossover_length_data(config: dict, seed: int) -> dict:
    """Points ``(operator, L, B*)`` from theory at several length scales, sim presets, LoCoMo
    evidence-length strata (``oas.length_strata``, 4 of them).

    Config keys: ``theory_scales`` (list), ``sources`` (``sim:<preset>``), ``locomo_tertiles``
    (bool: add the LoCoMo strata).
    """

    ws = _workspace(config, seed)
    points = []

    def add(label, s: SourceCurves, length=None):
        for op, c in s.operators.items():
            points.append(
                {
                    "label": label,
                    "operator": op,
                    "length": float(length or s.evidence_length),
                    "crossover": c.crossover,
                }
            )

    for scale in config.get("theory_scales", [0.5, 1, 2, 4]):
        add(f"theory x{scale:g}", ws.theory_curves(float(scale)))
    for name in config.get("sources", []):
        add(name, _source(ws, name))
    if config.get("locomo_tertiles", False):
        paired = ws.locomo_paired(ws.config.readers[0])
        strata, _, _, med = length_strata(
            evidence_length(paired), paired.query_id, ws.config.length_strata
        )
        for k in range(len(med)):
            s = curves_from_paired(
                ws.key(f"stratum:{k}"),
                paired.take(strata == k),
                name=f"locomo S{k + 1}",
                data="",
                n_resamples=ws.config.n_resamples,
            )
            add(f"locomo S{k + 1}", s, med[k])
    return {"points": plain(points)}


def crossover_length_figure(data: dict):
    pts = [
        dict(
            p,
            crossover=Estimate(
                *(
                    np.nan if p["crossover"][k] is None else p["crossover"][k]
                    for k in ("point", "lower", "upper")
                )
            ),
        )
        for p in data["points"]
    ]
    fig, axes = new_figure(1, width=5.0, height=4.0)
    plot_crossover_vs_length(axes[0], pts)
    fig.tight_layout()
    return fig


# ---- 4: Assumption-1 phase diagram ---------------------------------------------------------------


def phase_diagram_data(config: dict, seed: int) -> dict:
    """``dU`` over budget x one spillover knob from sim's stress test (MODEL §5).

    Config keys: ``scenario``, ``knob`` (``budget_spillover`` or ``rank_spillover``), ``levels``
    (knob values; 0 is always included), ``memories`` and ``memory_size`` (shared memories of that
    many clusters). Returns per operator the ``dU`` grid, the Assumption-1 prediction, the
    spillover term ``S``, the crossover shift and whether the sign reversal survives.
    """
    scen = load_scenario(config.get("scenario", "locomo-like"))
    knob = config.get("knob", "budget_spillover")
    if knob not in ("budget_spillover", "rank_spillover"):
        raise InputError(f"knob must be 'budget_spillover' or 'rank_spillover'; got {knob!r}.")
    levels = [float(x) for x in config.get("levels", [0.0, 0.1, 0.2, 0.4])]
    other = "rank_spillover" if knob == "budget_spillover" else "budget_spillover"
    res = stress(
        jax.random.PRNGKey(seed),
        scen,
        n_memories=int(config.get("memories", 256)),
        memory_size=int(config.get("memory_size", 8)),
        progress=False,
        **{knob: tuple(levels), other: (0.0,)},
    )
    return plain(
        {
            "knob": knob,
            "levels": getattr(res, knob),
            "budgets": res.budgets,
            "operators": {
                op: {
                    "delta": res.delta[:, k],
                    "predicted": res.predicted[:, k],
                    "spillover": res.spillover[:, k],
                    "crossover_budget": res.crossover_budget[:, k],
                    "predicted_crossover": res.predicted_crossover[:, k],
                    "crossover_shift": res.crossover_shift[:, k],
                    "sign_reversal": res.sign_reversal[:, k],
                }
                for k, op in enumerate(OPERATORS)
            },
        }
    )


def phase_diagram_figure(data: dict):
    """One panel per operator: ``dU`` over budget x knob, zero contour, crossovers marked."""
    budgets = np.asarray(data["budgets"], float)
    levels = np.asarray(data["levels"], float)
    fig, axes = grid(len(data["operators"]), width=4.8, height=3.6)
    for ax, (op, d) in zip(axes, data["operators"].items()):
        delta = np.asarray([[np.nan if v is None else v for v in row] for row in d["delta"]], float)
        knob = str(data["knob"]).replace("_", " ")
        plot_phase_diagram(ax, budgets, levels, delta, knob_label=knob)
        pred = np.asarray([np.nan if v is None else v for v in d["predicted_crossover"]], float)
        # gold on a black outline: visible on both ends of the diverging colormap
        ax.plot(pred, levels, color="black", lw=3.0)
        ax.plot(
            pred, levels, color="gold", ls="--", lw=1.6, marker="o", ms=3, label="Assumption-1 B*"
        )
        ax.plot([], [], color="black", lw=1, label="simulated dU = 0")
        ax.set_title(f"dU of {op} (blue: consolidate wins)", fontsize=9)
        ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    return fig


# ---- 5: OAS vs fixed policies per budget -----------------------------------------------------------


def _paired(ws: Workspace, source: str):
    if source.startswith("sim:"):
        return ws.sim_paired(source[4:])
    if source.startswith("locomo:"):
        return ws.locomo_paired(source[7:])
    raise InputError(f"source must be 'sim:<preset>' or 'locomo:<reader>'; got {source!r}.")


def policies_data(config: dict, seed: int) -> dict:
    """Accuracy per budget and policy with grouped 95% CIs on held-out groups (``oas.evaluate``)."""
    ws = _workspace(config, seed)
    out = {}
    for source in config.get("sources", ["sim:locomo-like"]):
        paired = _paired(ws, source)
        ev = evaluate(
            jax.random.fold_in(jax.random.PRNGKey(seed), 1),
            paired,
            alpha=float(config.get("alpha", 0.1)),
            n_resamples=ws.config.n_resamples,
            n_folds=n_folds_for(paired),
        )
        out[source] = plain(
            {
                "policies": list(ev.policies),
                "budgets": ev.budgets,
                "accuracy": ev.point[:, 0, :-1],
                "lower": ev.lower[:, 0, :-1],
                "upper": ev.upper[:, 0, :-1],
                "overall": ev.point[:, 0, -1],
                "info": ev.info,
            }
        )
    return {"sources": out}


def policies_figure(data: dict, policies=None):
    srcs = data["sources"]
    fig, axes = new_figure(len(srcs), width=5.0, height=3.8)
    for ax, (src, d) in zip(axes, srcs.items()):
        names = [p for p in d["policies"] if policies is None or p in policies]
        idx = [d["policies"].index(p) for p in names]
        arr = {k: np.asarray(d[k], float) for k in ("accuracy", "lower", "upper")}
        plot_policy_accuracy(
            ax,
            np.asarray(d["budgets"], float),
            {p: arr["accuracy"][i] for p, i in zip(names, idx)},
            {p: arr["lower"][i] for p, i in zip(names, idx)},
            {p: arr["upper"][i] for p, i in zip(names, idx)},
            title=src,
        )
    fig.tight_layout()
    return fig


# ---- 6: harm-accuracy trade-off of calibration -----------------------------------------------------


def harm_tradeoff_data(config: dict, seed: int) -> dict:
    """Harm rate and accuracy on held-out groups for calibration targets ``alphas`` (MODEL §8).

    The ridge model is fitted once on the training groups; for each alpha both calibrations
    (max accuracy s.t. harm <= alpha; conformal risk control) are fitted on the calibration groups
    and scored on the test groups, with grouped bootstrap CIs.
    """
    ws = _workspace(config, seed)
    paired = _paired(ws, config.get("source", "sim:locomo-like"))
    root = jax.random.PRNGKey(seed)
    k_split, k_fit, k_boot = jax.random.split(root, 3)
    part = np.asarray(group_split(k_split, paired.group_id, (0.5, 0.2, 0.3)))
    train, calib, test = paired.take(part == 0), paired.take(part == 1), paired.take(part == 2)
    fit = fit_ridge_on(k_fit, train)
    mu_cal, mu_test = predict_ridge(fit, calib.features), predict_ridge(fit, test.features)
    y = test.outcomes
    rows = np.arange(test.n)

    def scores(choice):
        chosen = y[rows, choice]
        return np.stack([chosen, (chosen < y[:, 0]).astype(float)], 1)

    alphas = [float(a) for a in config.get("alphas", [0.02, 0.05, 0.1, 0.2, 0.3])]
    cols = [scores(argmax_policy(mu_test))]
    for a in alphas:
        for rule in (calibrate_accuracy, calibrate_crc):
            th = rule(mu_cal, calib.outcomes, calib.budget, a)
            cols.append(scores(calibrated_policy(mu_test, test.budget, th)))
    values = np.concatenate(cols, axis=1)  # (n, 2 * (1 + 2 * len(alphas)))
    ci = grouped_bootstrap_mean(k_boot, values, test.group_id, n_resamples=ws.config.n_resamples)
    p, lo, hi = (np.asarray(x, float).reshape(-1, 2) for x in ci)

    def entry(i):
        return {"accuracy": [p[i, 0], lo[i, 0], hi[i, 0]], "harm": [p[i, 1], lo[i, 1], hi[i, 1]]}

    out = {
        "alphas": alphas,
        "oas": entry(0),
        "oas-calibrated": [],
        "oas-crc": [],
        "n_test": int(test.n),
        "test_groups": len(np.unique(test.group_id)),
    }
    for j in range(len(alphas)):
        out["oas-calibrated"].append(entry(1 + 2 * j))
        out["oas-crc"].append(entry(2 + 2 * j))
    return plain(out)


def harm_tradeoff_figure(data: dict):
    fig, axes = new_figure(1, width=5.0, height=4.0)
    ax = axes[0]
    for name, offset, ha in (("oas-calibrated", (3, 3), "left"), ("oas-crc", (-3, -9), "right")):
        style = policy_style(name)
        col, ls, marker = style["color"], style["ls"], style["marker"]
        h = [e["harm"][0] for e in data[name]]
        a = [e["accuracy"][0] for e in data[name]]
        ax.plot(h, a, marker=marker, ls=ls, color=col, label=name, zorder=4)
        # one label per distinct point: alphas that give the same thresholds share it
        groups: dict = {}
        for hh, aa, al in zip(h, a, data["alphas"]):
            groups.setdefault((hh, aa), []).append(f"{al:g}")
        for (hh, aa), als in groups.items():
            ax.annotate(
                f"{name.removeprefix('oas-')} alpha={', '.join(als)}",
                (hh, aa),
                fontsize=6,
                color=col,
                xytext=offset,
                textcoords="offset points",
                ha=ha,
            )
    plot_harm_tradeoff(
        ax, [], [], [], ref_harm=data["oas"]["harm"][0], ref_accuracy=data["oas"]["accuracy"][0]
    )
    ax.margins(0.12)
    fig.tight_layout()
    return fig


EXPERIMENTS = {
    "crossover_curves": (curves_data, crossover_curves_figure),
    "coverage_replacement": (curves_data, coverage_replacement_figure),
    "crossover_vs_length": (crossover_length_data, crossover_length_figure),
    "phase_diagram": (phase_diagram_data, phase_diagram_figure),
    "oas_vs_fixed": (policies_data, policies_figure),
    "harm_tradeoff": (harm_tradeoff_data, harm_tradeoff_figure),
}
