"""Stream scenarios: a sim scenario plus a ``[stream]`` table (MODEL §10).

A stream scenario is a TOML file with every table of a sim scenario (docs/simulation.md: query
types, operators, reader, budgets, packing) and one more, ``[stream]``::

    [stream]
    sessions = 40                                   # T, sessions in the stream (1..256)
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

from retcon.errors import InputError
from sim import _checks as ck
from sim._scenario import LengthConfig, Scenario, read_scenario_toml, scenario_from_dict
from theory import AGE_LAWS, DIST_PARAMS

STREAM_PRESETS = ("locomo-stream", "single-cluster-stream", "low-fidelity-stream")
DEFAULT_STREAM_PRESET = "locomo-stream"
MAX_SESSIONS = 256
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
    length = ck.table(
        "stream.session_length",
        t["session_length"],
        ("dist",) + tuple(sorted({p for v in DIST_PARAMS.values() for p in v})),
        ("dist",),
    )
    ck.choice("stream.session_length.dist", length["dist"], DIST_PARAMS)
    lc = LengthConfig(
        length["dist"],
        tuple((k, v) for k, v in length.items() if k != "dist"),
        where="stream.session_length",
    )
    stream = StreamConfig(
        sessions=t["sessions"],
        session_length=lc,
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
