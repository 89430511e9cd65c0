"""report.html: one self-contained page, answers first, the claim table with its error rates,
the figures embedded; rendered in headless Chromium where the browser is installed."""

import base64
import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from paper_checks._types import ClaimResult
from paper_checks.report._html import write_html
from paper_checks.report._report import write_report
from retcon.plots import new_figure, save

CHROMIUM = Path("/usr/bin/chromium")


def _results():
    rates = dict(
        false_pass_rate=0.012,
        false_fail_rate=0.2,
        power_paper_effect=0.86,
        summary="s",
        reason="r",
        headline="h",
    )
    return [
        ClaimResult(
            "1",
            "dU changes sign at B* <tag>",
            0.12,
            (0.1, 0.15),
            "Fig. 2",
            "locomo",
            "PASS",
            dict(rates),
        ),
        ClaimResult(
            "2",
            "the router beats best-fixed",
            -0.01,
            (-0.03, 0.01),
            "Table 8",
            "locomo",
            "INCONCLUSIVE",
            dict(rates, power_paper_effect=0.4),
        ),
        ClaimResult("3", "harm falls", None, None, "-", "-", "SKIPPED", {"reason": "no data"}),
    ]


def _figures(folder: Path) -> list[str]:
    paths = []
    for i, fmt in enumerate(("png", "svg")):
        fig, (ax,) = new_figure()
        ax.plot(np.arange(5), np.arange(5) ** (i + 1), color="tab:blue", lw=3)
        paths.append(str(save(fig, folder / f"fig_{i}.{fmt}", dpi=60)))
    return paths


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.imgs, self.h2, self.scripts, self.links = [], [], [], 0, 0
        self._row = self._h2 = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "claim":
            self._row = []
        elif tag == "img":
            src = a.get("src") or ""
            self.imgs.append(src)
            self.links += not src.startswith("data:")
        elif tag == "h2":
            self._h2 = ""
        elif tag == "script":
            self.scripts += 1
        elif tag in ("link", "iframe", "object"):
            self.links += 1

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None:
            self.rows.append([c.strip() for c in self._row])
            self._row = None
        elif tag == "h2" and self._h2 is not None:
            self.h2.append(self._h2.strip())
            self._h2 = None

    def handle_data(self, data):
        if self._row is not None:
            self._row.append(data) if data.strip() else None
        if self._h2 is not None:
            self._h2 += data


def _write(tmp_path, tables=None):
    out = tmp_path / "out"
    out.mkdir(parents=True)
    figs = _figures(out)
    report = write_report(
        out,
        _results(),
        config={"x": 1},
        seed=7,
        figures=figs,
        command="retcon paper-checks --out out",
        tables=tables,
    )
    write_html(out, _results(), report, figures=figs, command="retcon paper-checks --out out")
    return out


def test_report_html_order_table_rates_and_embedded_figures(tmp_path):
    out = _write(tmp_path)
    text = (out / "report.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    # the claim table and its plain words come before the rules' text (issue 46 item 5)
    assert page.h2 == [
        "The claims and their error rates",
        "In plain words",
        "Figures",
        "Command and provenance",
    ]
    assert [r[0] for r in page.rows] == ["1", "2", "3"]
    first = page.rows[0]
    assert "PASS" in first and "1.2%" in first and "20.0%" in first and "86.0%" in first
    assert "dU changes sign at B* <tag>" in first  # escaped in the file, text in the page
    assert "&lt;tag&gt;" in text and "<tag>" not in text
    assert page.rows[2][-6:] == ["SKIPPED", "-", "-", "-", "-", "-"]
    assert [s.split(";")[0] for s in page.imgs] == ["data:image/png", "data:image/svg+xml"]
    png = base64.b64decode(page.imgs[0].split(",", 1)[1])
    assert png == (out / "fig_0.png").read_bytes()
    assert page.scripts == 0 and page.links == 0  # self-contained: nothing to fetch
    assert text.index("claim-table") < text.index("In plain words") < text.index("provenance")
    assert "retcon paper-checks --out out" in text and ">7<" in text  # command and seed
    # same inputs, same bytes
    again = _write(tmp_path / "again")
    assert (again / "report.html").read_bytes() == text.encode("utf-8")


def test_report_html_shows_the_tables_block_when_present(tmp_path):
    tables = {"skipped": True, "not_made": [{"table": 4, "reason": "no LoCoMo file"}]}
    text = (_write(tmp_path, tables) / "report.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    assert page.h2[2] == "The paper's tables beside ours"
    assert "Table 4: no LoCoMo file." in text


def test_markdown_tables_become_html_tables():
    from paper_checks.report._html import markdown_html

    md = "# T\n\nsome **bold** text\n\n| a | b |\n| --- | --- |\n| 1 \\| 2 | `x` |\n\n- one\n"
    got = markdown_html(md)
    assert "<h2>T</h2>" in got and "<strong>bold</strong>" in got
    assert "<th>a</th><th>b</th>" in got and "<td>1 | 2</td><td><code>x</code></td>" in got
    assert "<ul><li>one</li></ul>" in got


def _chromium(*args, tmp: Path) -> subprocess.CompletedProcess:
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={tmp / 'profile'}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def _browser_or_skip():
    if CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK):
        return
    reason = f"{CHROMIUM} is absent (Debian: apt-get install -y chromium)"
    if os.environ.get("RETCON_REQUIRE_BROWSER") == "1":
        pytest.fail(f"RETCON_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.mark.slow
def test_report_html_renders_in_headless_chromium(tmp_path):
    """The browser's DOM has the claim rows and the figures decoded; its screenshot is not
    blank and shows the figures' blue lines."""
    _browser_or_skip()
    out = _write(tmp_path)
    url = (out / "report.html").as_uri()
    dom = _chromium("--dump-dom", url, tmp=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = _Page()
    page.feed(dom.stdout)
    assert [r[0] for r in page.rows] == ["1", "2", "3"] and len(page.imgs) == 2
    shot = tmp_path / "shot.png"
    run = _chromium(f"--screenshot={shot}", "--window-size=1200,2600", url, tmp=tmp_path)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    from matplotlib.image import imread

    img = imread(shot)[..., :3]
    assert img.shape[:2] == (2600, 1200)
    assert float(img.std()) > 0.05  # not blank
    blue = (np.abs(img - np.array([0.12, 0.47, 0.71])) < 0.08).all(-1)  # tab:blue
    assert blue.sum() > 500  # the embedded figures' lines were drawn
    verdict = re.findall(r'class="verdict (\w+)"', dom.stdout)
    assert verdict == ["PASS", "INCONCLUSIVE", "SKIPPED"]
