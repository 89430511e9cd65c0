"""The one plotting module: the palette, the budget axis, new figures and ``save``.

Every figure of the package (``retcon simulate``/``stress``/``crossover``/``evaluate``/
``identify``/``timeline``, the paper checks and ``experiments/``) takes its colours, its budget axis and its
writer from here, so one quantity looks the same in every figure. It sits in the base layer and
imports only matplotlib and numpy (inside the functions: importing it costs nothing).

Backend: none is ever set. Figures are ``matplotlib.figure.Figure`` objects made outside pyplot
(``new_figure``), which need no backend: ``save`` renders by the file's suffix (Agg for PNG).
So no module calls ``matplotlib.use``, and importing a package never changes a user's
matplotlib state or pyplot's figure list.

Budget axis (``budget_axis``): budgets are token counts on doubling grids (32, 64, ..., 2048), so
the axis is logarithmic in base 2 with its major ticks at powers of two. Labels stay short so
they never run together: plain integers below 1024, then ``1k``, ``2k``, ..., ``128k`` (k = 1024
tokens); a range of more than eight doublings shows every other power (or every third).

Style: ``STYLE`` is the path of the package's matplotlib style file (``retcon.mplstyle``: the
operator palette as the colour cycle, sizes, light grid, no top/right spines), usable as
``plt.style.use(retcon.plots.STYLE)``; ``register_style()`` adds it under the name ``"retcon"``
(``plt.style.use("retcon")``). Nothing is registered at import. The package's figures draw with
the rcParams in force, so a user's style (this one, or a journal's) restyles them; ``style()``
is a context that draws inside this one and gives the caller's rcParams back.

Formats: ``FORMATS`` (``png``, ``pdf``, ``svg``) are the suffixes ``save`` writes, the choices
of the CLI's shared ``--format`` option; ``figure_name(stem, fmt)`` names a figure file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from retcon.output import atomic_write

# The actions (MODEL §1): one colour each, in every figure.
OPERATOR_COLORS = {
    "ret": "tab:gray",
    "merge": "tab:blue",
    "abstract": "tab:orange",
    "rewrite": "tab:green",
}
# Operator line styles, so operators with equal curves (e.g. on real data) stay visible.
OPERATOR_DASHES = {"ret": ":", "merge": "-", "abstract": "--", "rewrite": "-."}

# The decomposition dU = C + R (MODEL §4): one colour and style per term, in every figure.
DECOMPOSITION_STYLES = {
    "coverage": ("tab:green", "-"),
    "replacement": ("tab:red", "--"),
    "delta": ("black", "-"),
}

# The policies of ``retcon evaluate`` and the paper checks (MODEL §8): (colour, line style,
# marker), each policy its own colour and its own marker.
POLICY_STYLES = {
    "always-ret": (OPERATOR_COLORS["ret"], "-.", "v"),
    "always-merge": (OPERATOR_COLORS["merge"], "-.", "^"),
    "always-abstract": (OPERATOR_COLORS["abstract"], "-.", "<"),
    "always-rewrite": (OPERATOR_COLORS["rewrite"], "-.", ">"),
    "best-fixed": ("tab:olive", "--", "D"),
    "oracle": ("black", ":", "*"),
    "oas": ("tab:purple", "-", "o"),
    "oas-calibrated": ("tab:red", "-", "s"),
    "oas-crc": ("tab:pink", "--", "X"),
    "mlp": ("tab:brown", "-.", "P"),
    "theory": ("tab:cyan", "-", "h"),
    # the paper's routing baselines (MODEL §8, Table 8)
    "fixed-operator": ("#393b79", "--", "d"),
    "evidence-fit": ("#637939", "-", "p"),
    "knn": ("#8c6d31", ":", "8"),
}
# The memory-over-time policies of ``retcon timeline`` (MODEL §10): (colour, line style).
TIMELINE_STYLES = {
    "retain-all": ("black", "-"),
    "overflow": ("tab:red", "-"),
    "periodic": ("tab:blue", "-"),
    "budget-aware": ("tab:green", "-"),
    "tiered": ("tab:purple", "--"),
    "router": ("tab:orange", "-."),
}
# Reference marks (a crossover time, a no-spillover crossover): a colour no operator, policy or
# decomposition term uses, so a mark is never read as a line of the data.
REFERENCE_COLOR = "#c51b7d"
# Their markers, drawn at staggered points (``markevery``), so a policy whose curve runs on top
# of another's stays visible.
TIMELINE_MARKERS = {
    "retain-all": "o",
    "overflow": "s",
    "periodic": "^",
    "budget-aware": "D",
    "tiered": "v",
    "router": "P",
}
FIXED_POLICIES = ("always-ret", "always-merge", "always-abstract", "always-rewrite")


def policy_style(name: str) -> dict:
    """``color``, ``ls`` and ``marker`` of a policy; a variant such as ``oas-calibrated@0.05``
    takes its base policy's; an unknown name gets matplotlib's next colour and a dot."""
    color, ls, marker = POLICY_STYLES.get(name.split("@", maxsplit=1)[0], (None, "-", "."))
    return {"color": color, "ls": ls, "marker": marker}


def budget_axis(ax, *, axis: str = "x", label: bool = True) -> None:
    """Make ``ax``'s ``axis`` a budget axis: log base 2, ticks at powers of two as integers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    target.set_major_locator(LogLocator(base=2, numticks=9))
    target.set_major_formatter(FuncFormatter(lambda v, _: budget_label(v)))
    target.set_minor_formatter(NullFormatter())
    if label:
        (ax.set_xlabel if axis == "x" else ax.set_ylabel)("budget B (tokens)")


def budget_label(v: float) -> str:
    """A budget tick's label: ``256``, ``1k`` (1024), ``128k`` (131072); ``0.5`` below one."""
    if v >= 1024 and float(v / 1024).is_integer():
        return f"{v / 1024:.0f}k"
    return f"{v:.0f}" if v >= 1 else f"{v:g}"


def new_figure(
    ncols: int = 1, nrows: int = 1, *, width: float = 4.2, height: float = 3.2, **subplots
):
    """A ``Figure`` outside pyplot (no backend, no global figure list) and its axes, flattened
    (``subplots`` passes ``sharex``/``sharey``)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplots)
    return fig, axes.ravel()


def grid(n: int, *, max_cols: int = 3, width: float = 4.2, height: float = 3.2):
    """A figure with ``n`` panels, at most ``max_cols`` per row; unused axes are hidden."""
    ncols = max(1, min(max_cols, n))
    nrows = -(-n // ncols)
    fig, axes = new_figure(ncols, nrows, width=width, height=height)
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


# Fixed metadata, so the same run gives the same bytes (no creation date, no version string).
_FIGURE_METADATA = {
    "png": {"Software": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
    "svg": {"Date": None, "Creator": None},
}


#: The formats ``save`` writes and the CLI's ``--format`` offers.
FORMATS = ("png", "pdf", "svg")

#: The package's matplotlib style file (``plt.style.use(STYLE)``).
STYLE = Path(__file__).with_name("retcon.mplstyle")


def figure_name(stem: str, fmt: str = "png") -> str:
    """``delta.png`` from ``("delta", "png")``; ``fmt`` must be one of ``FORMATS``."""
    if fmt not in FORMATS:
        raise ValueError(f"figure format must be one of {', '.join(FORMATS)}; got {fmt!r}.")
    return f"{stem}.{fmt}"


def with_format(names, fmt: str = "png") -> list[str]:
    """A command's output names with every ``.png`` figure renamed to ``fmt`` (``--format``)."""
    return [figure_name(n[:-4], fmt) if n.endswith(".png") else n for n in names]


def register_style() -> None:
    """Add the style under the name ``"retcon"``, so ``plt.style.use("retcon")`` works.

    Only on this call (no import of a package registers anything); calling it twice is harmless."""
    import matplotlib.style

    library = matplotlib.style.library
    if "retcon" not in library:
        from matplotlib import rc_params_from_file

        library["retcon"] = rc_params_from_file(STYLE, use_default_template=False)
        matplotlib.style.available[:] = sorted(library)


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Draw inside the package's style; the caller's rcParams come back on exit."""
    import matplotlib.style

    with matplotlib.style.context(STYLE):
        yield


def save(fig, path: str | os.PathLike, **kwargs) -> Path:
    """Save a figure atomically; the format comes from the suffix of ``path`` (default PNG).

    The file carries no timestamp, software version or random SVG id, so the same figure gives
    the same bytes.
    ``kwargs`` go to ``Figure.savefig`` (``dpi``).
    """
    import matplotlib

    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    if fmt in _FIGURE_METADATA and "metadata" not in kwargs:
        kwargs["metadata"] = _FIGURE_METADATA[fmt]

    def write(f) -> None:
        # SVG element ids are random unless salted: a fixed salt gives the same bytes
        with matplotlib.rc_context({"svg.hashsalt": "retcon"}):
            fig.savefig(f, format=fmt, **kwargs)

    return atomic_write(path, write, binary=True)
