"""Stream scenarios: a sim scenario plus a ``[stream]`` table (MODEL §10).

A stream scenario is a TOML file with every table of a sim scenario (docs/simulation.md: query
types, operators, reader, budgets, packing) and one more, ``[stream]``::

    [stream]
    sessions = 40                                   # T, sessions in the stream (1..4096, memory permitting)
    session_length = {dist = "exponential", mean = 200.0}   # law of a session's raw length L_s
    age = "uniform"                                 # age law of a query's evidence (theory.AGE_LAWS)
    cap = 2000.0                                    # overflow / tiered: the memory cap K, tokens
    period = 1                                      # periodic: consolidate every m sessions ...
    window = 0                                      # ... the raw units older than w sessions
    max_generation = 12                             # overflow: passes a unit may go through at most

The timeline reads, from the base scenario, the query types (weights, ``acc_raw``, per-type
fidelities), the operators' compression ratios, ``acc_guess``, ``packing``, ``budgets`` and
``queries``; the types' ``length`` tables and the retriever are not used (a stream's units are
whole sessions, retrieved most recent first). Every error names the key, as sim's scenarios do.

References: MODEL §10 (stream, policies), §2 (packing, reader); docs/timeline.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from retcon.errors import InputError, Spell, check_memory, memory_limit
from retcon.vocab import TIMELINE_POLICIES
from sim import _checks as ck
from sim._scenario import (
    LengthConfig,
    Scenario,
    length_from_table,
    read_scenario_toml,
    scenario_from_dict,
)
from theory import AGE_LAWS

STREAM_PRESETS = ("locomo-stream", "single-cluster-stream", "low-fidelity-stream")
DEFAULT_STREAM_PRESET = "locomo-stream"
MAX_SESSIONS = 4096  # the absolute ceiling of stream.sessions, period, window; `check_timeline_size` sizes the rest
_STREAM_KEYS = ("sessions", "session_length", "age", "cap", "period", "window", "max_generation")


@dataclass(frozen=True)
class StreamConfig:
    """The ``[stream]`` table (module docstring), validated.

    Attributes:
      sessions: ``T``. session_length: law of ``L_s``. age: ``uniform`` or ``oldest``.
      cap: ``K`` tokens (``overflow``, ``tiered``). period, window: ``m`` and ``w`` (``periodic``).
      max_generation: the most passes a unit goes through under ``overflow``.
    """

    sessions: int
    session_length: LengthConfig
    age: str = "uniform"
    cap: float = 2000.0
    period: int = 1
    window: int = 0
    max_generation: int = 12

    def __post_init__(self):
        ck.integer("stream.sessions", self.sessions, 1, MAX_SESSIONS)
        ck.choice("stream.age", self.age, AGE_LAWS)
        ck.number("stream.cap", self.cap, 0.0, None, low_open=True)
        ck.integer("stream.period", self.period, 1, MAX_SESSIONS)
        ck.integer("stream.window", self.window, 0, MAX_SESSIONS)
        ck.integer("stream.max_generation", self.max_generation, 1, 64)


@dataclass(frozen=True)
class StreamScenario:
    """A base ``Scenario`` and its ``StreamConfig``."""

    scenario: Scenario
    stream: StreamConfig

    @property
    def name(self) -> str:
        return self.scenario.name


def stream_from_dict(d: dict) -> StreamScenario:
    """Build a ``StreamScenario`` from the TOML layout; unknown keys are rejected.

    Raises:
      InputError: one line naming the key, the expected and the given value.
    """
    if not isinstance(d, dict) or "stream" not in d:
        raise InputError("missing key 'stream'; a timeline scenario needs a [stream] table.")
    rest = {k: v for k, v in d.items() if k != "stream"}
    t = ck.table("stream", d["stream"], _STREAM_KEYS, ("sessions", "session_length"))
    stream = StreamConfig(
        sessions=t["sessions"],
        session_length=length_from_table("stream.session_length", t["session_length"]),
        **{k: t[k] for k in ("age", "cap", "period", "window", "max_generation") if k in t},
    )
    return StreamScenario(scenario_from_dict(rest), stream)


def load_stream(path_or_name: str | Path | None = None) -> StreamScenario:
    """Load a stream scenario from a preset (``STREAM_PRESETS``) or a TOML file.

    Raises:
      InputError: an unknown preset, an unreadable or invalid file (one line naming it and the key).
    """
    s = DEFAULT_STREAM_PRESET if path_or_name is None else str(path_or_name)
    data, source = read_scenario_toml(
        s,
        STREAM_PRESETS,
        f"--scenario: unknown stream scenario {s!r}; expected one of "
        f"{list(STREAM_PRESETS)} or a .toml file.",
    )
    try:
        return stream_from_dict(data)
    except InputError as e:
        raise InputError(f"{source}: {e}") from None


# --------------------------------------------------------------------------- size check
# Here, not in sim._timeline, so a run too large is refused before JAX is imported.

TIMELINE_CHUNK = 256  # streams per compiled call of `sim.simulate_timeline` (its CHUNK)


def bucket(n: int) -> int:
    """The compiled size that holds ``n`` sessions or budgets: the smallest of 1, 2, 3, 4, 6, 8,
    12, 16, 24, ... (powers of two and 1.5 times them) at least ``n``.

    ``sim.simulate_timeline`` pads the time and budget axes to it, so a run at another ``T`` or
    number of budgets in the same step reuses the compiled kernel, at most 1.5x the work of ``n``.
    """
    size = 1
    while size < n:
        size = size * 3 // 2 if size >= 2 and size & (size - 1) == 0 else 1 << size.bit_length()
    return size


MAX_QUERIES = 2**20  # --queries and the scenario's ``queries``: the same cap
# Peak bytes of one compiled chunk per (stream, budget, session): XLA's intermediates for every
# policy row and pass, measured at about 4.6e2 B (256 budgets, 32 sessions: 1.2 GB peak) and
# rounded up; with ``max_generation`` up to 8 (the level counts of ``overflow`` and
# ``budget-aware`` are ``(budgets, T, max_generation)`` per stream).
_BYTES_PER_CHUNK_CELL = 512
# ... and per (stream, budget, session) for each level past 8: about six int32/float32 arrays of
# the level counts (edges, clipped edges, two gathers of the running totals).
_BYTES_PER_LEVEL_CELL = 32
# ``skip`` packing runs the dense kernel: per (stream, budget, session, session) the generations,
# the units and the packed tokens of a time row (float32/int32), for every policy row; measured
# at about 80 B (locomo-stream with skip packing, 256 streams: peak RSS 0.98 GB at 64 sessions,
# 2.48 GB at 128) and rounded up.
_BYTES_PER_DENSE_CELL = 96
# Bytes kept per (stream, row, budget, session) of the outcome: int result, float64, concatenation.
_BYTES_PER_OUTCOME_CELL = 3 * 8
# Up to this many sessions (the cap before the size guard) a run too large names its budgets, as
# it always did; past it, ``stream.sessions``.
_SESSIONS_NAMED_FROM = 256


def timeline_bytes(
    sessions: int,
    n_budgets: int,
    queries: int,
    n_rows: int,
    passes: int,
    *,
    packing: str = "prefix",
) -> float:
    """Estimated peak memory of `simulate_timeline` (MODEL §10): one compiled chunk of
    ``TIMELINE_CHUNK`` streams (compiled at the `bucket` of ``sessions`` and ``n_budgets``) plus
    the outcomes of every stream kept in numpy.

    ``passes``: ``max_generation``. ``packing``: ``skip`` runs the dense kernel, whose arrays are
    ``(budgets, T, T)`` per stream (quadratic in ``T``); ``prefix`` and ``cut`` are linear."""
    t_pad, b_pad = bucket(sessions), bucket(n_budgets)
    cell = _BYTES_PER_CHUNK_CELL + _BYTES_PER_LEVEL_CELL * max(0, passes - 8)
    chunk = TIMELINE_CHUNK * b_pad * t_pad * cell
    if packing == "skip":
        chunk += TIMELINE_CHUNK * b_pad * t_pad * t_pad * _BYTES_PER_DENSE_CELL
    kept = queries * n_budgets * (n_rows * sessions + 3 * (passes + 1)) * _BYTES_PER_OUTCOME_CELL
    return float(chunk + kept)


def _most(need, limit: float, hi: int) -> int:
    """The largest ``n`` in ``[0, hi]`` with ``need(n) <= limit`` (``need`` grows with ``n``)."""
    lo = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if need(mid) <= limit else (lo, mid - 1)
    return lo


def check_queries(queries, spell: Spell) -> int:
    """``queries`` streams when an integer in ``[2, MAX_QUERIES]``; else ``InputError`` naming
    ``spell``'s ``queries`` (``--queries`` in the CLI)."""
    if isinstance(queries, bool) or not isinstance(queries, int) or not 2 <= queries <= MAX_QUERIES:
        raise InputError(
            f"{spell.lead('queries')} must be an integer in [2, 2**20]; got {queries!r}."
        )
    return queries


def check_timeline_size(ss, budgets, queries, *, scenario=None) -> None:
    """Refuse, before any work, a ``retcon timeline simulate`` run (or a ``simulate_timeline``
    call, which runs this first) whose streams, sessions or budgets cannot fit: the scenario's
    ``queries`` passes the cap of ``--queries``, and the memory estimate (``timeline_bytes``) the
    same ``check_memory`` refusal as ``retcon simulate``. Called from Python the arguments are
    named as Python names them (``budgets``, ``queries=...``).

    The size guard of ``stream.sessions`` (MODEL §10): past 256 sessions (the old fixed cap), a
    run that would fit at 256 but not at its ``T`` is refused naming ``stream.sessions``, the value
    and the most sessions that fit at its budgets and queries; otherwise the budgets are named.

    Args:
      ss: the loaded ``sim.StreamScenario``. budgets, queries: the options (None: the scenario's).
      scenario: ``--scenario`` as given, to name the file when its own values are too large.
    """

    spell = Spell("simulate_timeline")
    if queries is not None:
        check_queries(queries, spell)
    src = f"--scenario {scenario}" if scenario else f"the scenario {ss.name!r}"
    q = ss.scenario.queries if queries is None else queries
    if queries is None and not 2 <= q <= MAX_QUERIES:
        raise InputError(
            f"{src}: queries must be an integer in [2, 2**20] (the cap of --queries); got {q}."
        )
    b = ss.scenario.budgets if budgets is None else budgets
    what_b = (
        f"{spell('budgets')} ({len(b)} values)"
        if budgets is not None
        else f"{src} ({len(b)} budgets)"
    )
    what_q = spell.given("queries", q) if queries is not None else f"{q} queries"
    rows = 1 + 3 * (len(TIMELINE_POLICIES) - 1)
    st = ss.stream
    packing = ss.scenario.packing

    def need(sessions: int, n: int) -> float:
        return timeline_bytes(sessions, n, q, rows, st.max_generation, packing=packing)

    limit = memory_limit()
    T = st.sessions
    if T > _SESSIONS_NAMED_FROM and need(_SESSIONS_NAMED_FROM, len(b)) <= limit:
        # the budgets fit at the old cap: the sessions are what does not fit
        most_t = _most(lambda t: need(t, len(b)), limit, T)
        arrays = (
            "the dense kernel's (budgets, T, T) arrays of skip packing"
            if packing == "skip"
            else "per-session outcomes of every policy row"
        )
        check_memory(
            f"{src}: stream.sessions = {T} with {len(b)} budgets and {what_q}",
            need(T, len(b)),
            fix=f"use at most {most_t} sessions (stream.sessions) with these budgets and "
            f"queries, or fewer budgets or queries (the run holds {arrays}, {TIMELINE_CHUNK} streams "
            "compiled at a time)",
        )
        return
    most = _most(lambda n: need(T, n), limit, int(limit // need(T, 1)))  # the most budgets
    check_memory(
        f"{what_b} with {what_q}",
        need(T, len(b)),
        fix=f"use at most {most} budgets with {q} queries, or fewer queries"
        if most >= 1
        else "use fewer queries",
    )
