"""The text of memory over time (MODEL §10): one writer per table of `TimelineReport`, and the
text of `timeline_identify`'s report.

`timeline_text` lays out the tables of a simulated or a LoCoMo report as ``retcon timeline``
prints them; each table has its own writer below, reading the report's JSON values (``None``
where a number is not finite; the row's ``status`` says why).

References: MODEL §10; docs/timeline.md.
"""

from __future__ import annotations

import math

from oas._timeline_report import TimelineReport


def timeline_text(report: TimelineReport) -> str:
    """The report as text: the simulated or the LoCoMo tables, then the router's gains."""
    d = report.as_json()
    text = timeline_table(d) if report.source == "simulated" else locomo_table(d)
    if report.router is not None:
        units = "streams" if report.source == "simulated" else "conversations"
        text += "\n\n" + router_table(report.router, units)
    return text


def _mean(xs) -> str:
    vals = [x for x in xs if x is not None]
    return f"{sum(vals) / len(vals):.1f}" if vals else "none"


def identify_text(report: dict) -> str:
    """The leave-one-conversation-out comparison as text (one row per chain, quantity, cell)."""
    lines = [
        f"timeline identify: {report['conversations']} conversations, leave one out, "
        f"{report['passes']} passes ({report['first_pass']}), lexical reader, ages "
        f"{report['age_law']}",
        "pass chains fitted on all conversations (S_k survival, R_k length ratio, k = 0..K):",
    ]
    for op, f in report["fits"].items():
        s = " ".join(f"{x:.3f}" for x in f["support"])
        r = " ".join(f"{x:.3f}" for x in f["ratio"])
        lines.append(
            f"  {op:<9} S = {s}   R = {r}   H10: phi = {f['phi']:.3f}, rho = {f['rho']:.3f}"
        )
    names = {"crossover_time": "crossover time t*", "best_generation": "best passes k*"}
    for key, m in report["misfit"].items():
        chain, q = key.split("/")
        lines += [
            "",
            f"{names[q]}, chain {chain}: mean over conversations, predicted vs observed; "
            "agree = share equal; bias = observed - predicted [95% t interval], Holm p; "
            "coverage of the held-out predictive intervals",
        ]
        for c in report["cells"]:
            if c["chain"] != chain or c["quantity"] != q:
                continue
            bias = (
                "-"
                if c["bias"] is None
                else f"{c['bias']:+.2f} [{c['lower']:+.2f}, {c['upper']:+.2f}]"
            )
            ph = _end(c["p_holm"], ".3f")
            lines.append(
                f"  {c['operator']:<9}{c['budget']:>7g}  pred {_mean(c['predicted']):>5}  "
                f"obs {_mean(c['observed']):>5}  agree {c['agree']:.1f}  bias {bias:<22} "
                f"p_holm {ph:<6} covered {c['covered']}/{c['with_interval']}"
            )
        cov = m["coverage"]
        verdict = (
            f"misfit: yes (Holm p = {m['p_holm']:.3f}, {m['operator']} at {m['budget']:g})"
            if m["misfit"]
            else f"misfit: no (smallest Holm p = {_end(m['p_holm'], '.3f')})"
        )
        lines.append(
            f"  {verdict}; exact agreement {m['agree']:.2f}; predictive intervals cover "
            f"{cov['covered']}/{cov['intervals']}"
        )
    return "\n".join(lines)


def _num(x) -> str:
    """A number for tables; ``None`` (JSON's non-finite: an end beyond the last session) is inf."""
    return "inf" if x is None else f"{x:.2f}"


def _end(x, spec: str = ".2f") -> str:
    """An interval end for the simulated table (a p-value: ``spec=".3f"``); ``None`` (no
    resamples: ``--resamples 0``; no p-value) is -."""
    return "-" if x is None else f"{x:{spec}}"


def _conclusion(crossover: list) -> list[str]:
    """The answer first, one line per operator: from which session periodic consolidation beats
    retain-all at each budget (``first_win`` of a row with a crossover), else that it never does
    within the stream and why (its ``status``)."""
    lines = ["Conclusion:"]
    ops = list(dict.fromkeys(c["operator"] for c in crossover))
    for op in ops:
        parts = []
        for c in (c for c in crossover if c["operator"] == op):
            t, fw = c["crossover_time"], c["first_win"]
            at = f"at B = {c['budget']:g}"
            if fw == 1:
                parts.append(f"{at} from session 1 on")
            elif t is not None and math.isfinite(t) and fw is not None:
                parts.append(f"{at} from session {fw:.0f} on")
            else:
                parts.append(f"{at} never ({c['status']})")
        lines.append(f"  {op}: periodic {op} beats retain-all " + "; ".join(parts) + ".")
    if not ops:
        lines.append("  no periodic policy was run (the crossover table is empty).")
    return lines


def _crossover_cell(c: dict, end) -> str:
    """A crossover row's time and interval (``end`` writes its ends), else why it has none."""
    t = c["crossover_time"]
    if t is not None and math.isfinite(t):
        return f"{t:.2f} [{end(c['lower'])}, {end(c['upper'])}]"
    return "from session 1" if c["first_win"] == 1 else f"none ({c['status']})"


def _survival_table(survival: dict) -> list[str]:
    """LoCoMo: survival against passes per chain, its H10 fits and the geometric-or-not answer."""
    lines = [
        "",
        "Answer survival against passes (share of raw-answerable questions still answerable):",
    ]
    for key, s in survival.items():
        cells = "  ".join(
            f"k={c['passes']}: {c['mean']:.3f} [{c['lower']:.3f}, {c['upper']:.3f}]"
            for c in s["survival"][1:]
        )
        lines.append(f"  {key:<22} {cells}")
        fits = "; ".join(
            f"{m}: phi={v['phi']:.3f}" + ("" if m == "geometric" else f", c={v['c']:.3f}")
            for m, v in s["fits"].items()
        )
        gains = "; ".join(
            f"{m} {v['mean']:+.2f} [{_num(v['lower'])}, {_num(v['upper'])}]"
            for m, v in s["loco_gain_over_geometric"].items()
        )
        lines.append(f"  {'':<22} fits: {fits}")
        lines.append(f"  {'':<22} held-out gain over geometric: {gains} -> {s['verdict']}")
    return lines


def _locomo_crossover_table(crossover: list) -> list[str]:
    """LoCoMo: each operator's crossover time with its interval and first win."""
    lines = ["", "Crossover time (periodic, every session passed once, vs retain-all):"]
    for c in crossover:
        cell = _crossover_cell(c, _num)
        fw = c["first_win"]
        first = "never" if fw is None else f"session {fw:.0f}"
        lines.append(f"  {c['operator']:<10}{c['budget']:>8g}  {cell:<28} first win: {first}")
    return lines


def _locomo_utility_table(utility: list) -> list[str]:
    """LoCoMo: utility per policy and budget, averaged over the sessions."""
    lines = ["", "Utility (lexical accuracy), mean over the sessions, per policy and budget:"]
    for u in utility:
        vals = [x for x in u["utility"] if x is not None]
        name = u["policy"] + ("" if u["operator"] is None else "/" + u["operator"])
        if vals:
            lines.append(f"  {name:<24}{u['budget']:>8g}  {sum(vals) / len(vals):.3f}")
    return lines


def locomo_table(report: dict) -> str:
    """The LoCoMo report (``as_json``) as text: survival, crossover times, utility, llm passes."""
    lines = [
        *_conclusion(report["crossover"]),
        "",
        f"timeline locomo: {report['conversations']} conversations, {report['passes']} passes, "
        f"lexical reader; intervals: Student-t over conversations",
        *_survival_table(report["survival"]),
        *_locomo_crossover_table(report["crossover"]),
        *_locomo_utility_table(report["utility"]),
    ]
    if "llm_passes" in report:
        lines += _llm_table(report["llm_passes"])
    return "\n".join(lines)


def _llm_table(r: dict) -> list[str]:
    """The ``llm_passes`` section as text: survival and utility against passes, per later backend."""
    sub = f"first {r['sessions']} sessions of each" if r["sessions"] else "all sessions"
    lines = [
        "",
        f"Passes 2..{r['passes']} by the llm operator beside extractive ({r['conversations']} "
        f"conversations, {sub}; pass 1: {r['first']}; LLM calls: {r.get('llm_calls')}):",
    ]
    for key, v in r["results"].items():
        s = v["survival"]
        cells = "  ".join(
            f"k={c['passes']}: {c['mean']:.3f} [{_num(c['lower'])}, {_num(c['upper'])}]"
            for c in s["survival"][1:]
        )
        lines.append(f"  {key:<30} at risk {s['questions_at_risk']:>3}  survival {cells}")
        lines.append(f"  {'':<30} verdict: {s['verdict']}")
        for u in v["utility"]:
            cells = "  ".join(
                f"k={c['passes']}: " + ("nan" if c["mean"] is None else f"{c['mean']:.3f}")
                for c in u["cells"]
            )
            lines.append(f"  {'':<30} utility B={u['budget']:g}: {cells}")
    return lines


def router_table(router: dict, units: str) -> str:
    """The router's gains over each baseline, as text."""
    lines = [
        f"Router over time: gain of its time-averaged utility over each policy "
        f"(95% interval over {units}):"
    ]
    for g in router["gains"]:
        extra = (
            f"  sign-flip p = {g['sign_flip_p']:.3f}, Holm {g['holm_p']:.3f}"
            if "holm_p" in g
            else ""
        )
        lines.append(
            f"  {g['operator']:<10}{g['budget']:>8g}  vs {g['baseline']:<13}"
            f"{g['gain']:+.3f} [{g['lower']:+.3f}, {g['upper']:+.3f}]{extra}"
        )
    if "finding" in router:
        for policy, f in router["finding"].items():
            lines.append(
                f"  vs {policy}: {f['answer']} ({f['above']} of {f['cells']} cells better, "
                f"{f['below']} worse; sign-flip test, Holm over the cells, 5%)"
            )
    return "\n".join(lines)


def _utility_table(report: dict) -> list[str]:
    """Simulated: utility against time per budget and policy, with CI half-widths."""
    times = report["times"]
    t_show = sorted({1, *range(4, len(times) + 1, max(1, len(times) // 8)), len(times)})
    lines = ["", "Utility against time (session t), 95% CI half-width in brackets:"]
    for b in report["budgets"]:
        rows = [u for u in report["utility"] if u["budget"] == b]
        lines.append(f"  budget {b:g}:")
        head = "    " + f"{'policy/operator':<24}" + "".join(f"{'t=' + str(t):>14}" for t in t_show)
        lines.append(head)
        for u in rows:
            name = u["policy"] + ("" if u["operator"] is None else "/" + u["operator"])
            cells = "".join(
                f"{u['utility'][t - 1]:>8.3f} [{(u['upper'][t - 1] - u['lower'][t - 1]) / 2:.3f}]"
                for t in t_show
            )
            lines.append(f"    {name:<24}{cells}")
    return lines


def _crossover_table(crossover: list) -> list[str]:
    """Simulated: each operator's crossover time with its interval, beside theory's ``t*``."""
    lines = ["", "Crossover time (first session from which periodic beats retain-all):"]
    has_theory = any("theory_crossover_time" in c for c in crossover)
    head = (
        f"  {'operator':<10}{'budget':>8}  {'t* [95% interval]':<26}{'status':<10}{'first win':>10}"
    )
    if has_theory:
        head += f"{'theory t*':>12}{'contains':>10}"
    lines.append(head)
    for c in crossover:
        cell = _crossover_cell(c, _end)
        fw = c["first_win"]
        line = (
            f"  {c['operator']:<10}{c['budget']:>8g}  {cell:<26}{c['status']:<10}"
            f"{(f'{fw:.0f}' if fw is not None and math.isfinite(fw) else '-'):>10}"
        )
        if has_theory:
            ts = c.get("theory_crossover_time")
            ok = c.get("contains_theory")
            line += f"{(f'{ts:.2f}' if ts is not None and math.isfinite(ts) else '-'):>12}"
            line += f"{('-' if ok is None else 'yes' if ok else 'NO'):>10}"
        lines.append(line)
    return lines


def _by_generation_table(by_generation: list) -> list[str]:
    """Simulated: utility against the number of passes ``k`` and the best ``k``."""
    lines = [
        "",
        "Utility against the number of passes k (last session; every unit passed k times):",
    ]
    for g in by_generation:
        us = " ".join(f"{x:.3f}" for x in g["utility"])
        lines.append(
            f"  {g['operator']:<10}{g['budget']:>8g}  U(k=0..) = {us}   best k = {g['best_generation']}"
        )
        if "theory_utility" in g:  # where theory applies: its exact U(k), and which cells hold it
            th = " ".join(f"{x:.3f}" for x in g["theory_utility"])
            held = sum(g["contains_theory"])
            lines.append(
                f"  {'':<18}  theory     {th}   interval holds it at {held} of {len(th.split())} k"
            )
    return lines


def timeline_table(report: dict) -> str:
    """The simulated report (``as_json``) as text: utility against time, crossover times, U(k)."""
    lines = [
        *_conclusion(report["crossover"]),
        "",
        f"timeline: {report['scenario']}, {report['sessions']} sessions, {report['queries']} "
        f"streams, ages {report['age']}; theory {report['theory']}",
        *_utility_table(report),
        *_crossover_table(report["crossover"]),
        *_by_generation_table(report["by_generation"]),
    ]
    return "\n".join(lines)


__all__ = ["identify_text", "timeline_text"]
