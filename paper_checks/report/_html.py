"""``report.html``: the paper checks as one self-contained page to open in a browser.

Order, as a reader asks: the answers in plain words, then the claim table with each rule's error
rates, then (with ``--design paper``) the paper's tables beside ours, then the figures (embedded
as base64 PNG or SVG: the page needs no other file), then the command and provenance (seed,
versions, the data's sha256). Nothing is computed here: the page is drawn from the same
``ClaimResult`` list and ``report.json`` object as ``REPORT.md``. No script, no external
resource, no timestamp: the same run gives the same bytes.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paper_checks._types import ClaimResult
from paper_checks.report._report import format_measured
from paper_checks.rules._acceptance import ACCEPTANCE_RULE, answer
from paper_checks.tables._design import tables_markdown
from retcon.output import write_text_atomic

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}
.verdict{font-weight:bold;white-space:nowrap}.PASS{color:#1a7f37}.FAIL{color:#c62828}
.PARTIAL{color:#9a6700}.INCONCLUSIVE{color:#57606a}.NOT-TESTABLE{color:#57606a}.SKIPPED{color:#8c8c8c}
ul.answers li{margin:.35em 0}figure{margin:1.2em 0}figure img{max-width:100%;
border:1px solid #eee}figcaption{font-size:.85em;color:#555}code{font-size:.9em}
.prov td:first-child{white-space:nowrap;font-weight:bold}
"""

_MIME = {".png": "image/png", ".svg": "image/svg+xml"}


def inline(text: Any) -> str:
    """Escape ``text`` and turn its markdown ``**bold**`` and ```code``` into HTML."""
    s = html.escape(str(text), quote=False)
    s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", s)


def markdown_html(md: str) -> str:
    """The few markdown forms ``TABLES.md`` uses: headings, paragraphs, bullets, pipe tables."""
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line:
            i += 1
        elif line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 1, 4)  # the page's h1 is the report's
            out.append(f"<h{level}>{inline(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", lines[i].strip())[1:-1]]
                if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                    rows.append([c.replace("\\|", "|") for c in cells])
                i += 1
            head, body = rows[0], rows[1:]
            out.append(
                "<table><thead><tr>"
                + "".join(f"<th>{inline(c)}</th>" for c in head)
                + "</tr></thead><tbody>"
                + "".join(
                    "<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in body
                )
                + "</tbody></table>"
            )
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "|", "- ")):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{inline(' '.join(para))}</p>")
    return "\n".join(out)


def _rate(v) -> str:
    return "-" if v is None else f"{100 * float(v):.1f}%"


def _figure(path: Path) -> str:
    """One figure, embedded; a format a page cannot show inline (PDF) is named instead."""
    mime = _MIME.get(path.suffix.lower())
    name = html.escape(path.name)
    if mime is None:
        return f"<p>Figure <code>{name}</code> (open the file: a browser page cannot embed it).</p>"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{name}" src="data:{mime};base64,{data}">'
        f"<figcaption>{name}</figcaption></figure>"
    )


def render_html(
    results: Sequence[ClaimResult],
    report: dict,
    *,
    figures: Sequence[str] = (),
    command: str = "retcon paper-checks",
) -> str:
    """The page, as a string.

    Args:
      results: the claim results, in report order.
      report: the ``report.json`` object (claims, data, sidecar, and ``tables`` when present).
      figures: paths of the figures written (PNG and SVG are embedded).
      command: the command line that made the run.
    """

    side = report.get("sidecar") or {}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Paper checks: claim by claim</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Paper checks: claim by claim</h1>",
        '<h2 id="claims">The claims and their error rates</h2>',
        "<p>Ours: the headline estimate with its 95% interval. False PASS, FAIL, PARTIAL and power: "
        "the verdict rule's measured rates at the data's group count "
        "(<code>paper_checks.operating</code>).</p>",
        '<table id="claim-table"><thead><tr><th>#</th><th>claim</th><th>paper\'s figure</th>'
        "<th>ours (95% CI)</th><th>verdict</th><th>false PASS</th><th>false FAIL</th>"
        "<th>false PARTIAL</th>"
        "<th>power (paper's effect)</th><th>data</th></tr></thead><tbody>",
    ]
    for r in results:
        d = r.details
        parts.append(
            f'<tr class="claim"><td>{inline(r.claim_id)}</td><td>{inline(r.claim)}</td>'
            f"<td>{inline(r.paper_figure)}</td><td>{inline(format_measured(r))}</td>"
            f'<td class="verdict {html.escape(r.verdict.replace(" ", "-"))}">'
            f"{html.escape(r.verdict)}</td>"
            f"<td>{_rate(d.get('false_pass_rate'))}</td><td>{_rate(d.get('false_fail_rate'))}</td>"
            f"<td>{_rate(d.get('false_partial_rate'))}</td>"
            f"<td>{_rate(d.get('power_paper_effect'))}</td><td>{inline(r.data)}</td></tr>"
        )
    parts += [
        "</tbody></table>",
        '<h2 id="answers">In plain words</h2>',
        '<ul class="answers">'
        + "".join(f"<li>{inline(answer(r).removeprefix('- '))}</li>" for r in results)
        + "</ul>",
        f"<p>{inline(ACCEPTANCE_RULE)}</p>",
    ]
    if report.get("tables") is not None:
        parts += [
            '<h2 id="tables">The paper\'s tables beside ours</h2>',
            markdown_html(tables_markdown(report["tables"])),
        ]
    if figures:
        parts.append('<h2 id="figures">Figures</h2>')
        parts += [_figure(Path(f)) for f in figures]
    prov = [("command", command), ("seed", side.get("seed"))]
    prov += [(k, v) for k, v in side.items() if k.endswith("_version") or k == "python"]
    for d in report.get("data") or ():
        prov.append(
            (
                f"data: {d.get('name')}",
                f"{d.get('path')} (sha256 {d.get('sha256')}; {d.get('n_rows')} rows, "
                f"G = {d.get('n_groups')} groups)",
            )
        )
    parts += [
        '<h2 id="provenance">Command and provenance</h2>',
        '<table class="prov"><tbody>'
        + "".join(f"<tr><td>{inline(k)}</td><td>{inline(v)}</td></tr>" for k, v in prov)
        + "</tbody></table>",
        "<p>The numbers are those of <code>report.json</code> and <code>REPORT.md</code> in this "
        "folder; the run's full configuration is in <code>report.json</code>'s sidecar.</p>",
        "</body></html>",
        "",
    ]
    return "\n".join(parts)


def write_html(
    out_dir,
    results: Sequence[ClaimResult],
    report: dict,
    *,
    figures: Sequence[str] = (),
    command: str = "retcon paper-checks",
) -> Path:
    """Write ``out_dir/report.html`` atomically (``retcon.output``); return its path."""

    page = render_html(results, report, figures=figures, command=command)
    return write_text_atomic(Path(out_dir) / "report.html", page)
