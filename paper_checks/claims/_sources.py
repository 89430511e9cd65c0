"""Where the checks get their numbers: theory, sim, OAS and LoCoMo, behind one memoizing workspace.

Real data are either LoCoMo paired here (``locomo_paired``) or the user's ``--paired`` files
(``paired_source``, ``paper_checks._paired``); both give ``oas.PairedData`` and every claim reads
them through ``real_paired`` / ``real_curves`` / ``admissibility`` / ``loco``, so the two paths
share every grading step.

Each source is computed once per run and shared by every claim that needs it. The packages it
reads (theory, sim, oas, oas.real) are ordinary imports: a renamed function is an ``ImportError``
when this module is imported, never a skipped claim. Only what a run may lack skips: LoCoMo absent
raises ``DataMissing``, an optional endpoint or measurement that is unavailable (the LLM reader,
chance rates) raises ``DependencyMissing``; the claim turns either into SKIPPED with the reason
(never into a pass). Randomness: one root key per
run and ``fold_in(root, id)`` per source, so adding a source never shifts the others.

References: MODEL §6 (theory), §3-5 (sim), §8 (OAS, paired data), §9 (LoCoMo).
"""

from __future__ import annotations

import dataclasses
import os
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np

from oas import normalize, paired_from_rows, simulate_paired, token_table
from oas.real import (
    ConversationContext,
    PairConfig,
    apply_audit,
    cached_path,
    design_overlay,
    load_locomo,
    make_embedder,
    make_operators,
    make_reader,
    make_tokenizer,
    paper_sample_queries,
    parse_audit_modes,
    predict_conversation_types,
    prepare_query_rows,
    score_query_rows,
)
from paper_checks._config import CheckConfig
from paper_checks._curves import (
    chance_outcomes,
    curves_from_paired,
    evidence_length,
    raw_accuracy_check,
)
from paper_checks._loco import loco_evaluate
from paper_checks._paired import judge_flag_lines, load_paired_source
from paper_checks._types import Estimate, OperatorCurve, SourceCurves
from paper_checks.tables._design import (
    SECOND_READER_OPTION,
    check_second_reader,
    paper_tables,
    skipped_tables,
)
from retcon.errors import InputError, check_choice
from retcon.output import file_sha256
from retcon.vocab import OPERATORS
from sim import load_scenario, simulate, simulate_queries, simulated_crossover
from theory import crossover, delta_curve, grid_crossover, make_length_dist

LOCOMO_FILE = "locomo10.json"


class DependencyMissing(Exception):
    """An optional dependency a check needs is unavailable (an endpoint, a stored measurement).

    Never raised for our own packages: those are ordinary imports, so a renamed function fails
    at import time instead of skipping a claim.
    """


class DataMissing(Exception):
    """The data file a check needs (LoCoMo) is absent."""


def stable_id(name: str) -> int:
    """A small integer from a name, the same in every run (for ``jax.random.fold_in``)."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def locomo_path(data: str | os.PathLike | None) -> Path:
    """The LoCoMo file: ``data`` if given (must exist), else ``$RETCON_DATA_DIR/locomo10.json``.

    Raises:
      InputError: ``data`` given but no such file.
      DataMissing: no ``data`` and no cached file.
    """
    if data is not None:
        p = Path(data)
        if p.is_dir():
            p = p / LOCOMO_FILE
        if not p.is_file():
            raise InputError(
                f"--data: no such LoCoMo file {str(data)!r}; expected a path to {LOCOMO_FILE}."
            )
        return p
    env = os.environ.get("RETCON_DATA_DIR")
    candidates = [Path(env) / LOCOMO_FILE] if env else []
    candidates.append(Path(cached_path("locomo")))  # the cache of `retcon data fetch locomo`
    for p in candidates:
        if p.is_file():
            return p
    raise DataMissing(
        "LoCoMo data absent: pass --data PATH or set RETCON_DATA_DIR "
        "(or run `retcon data fetch locomo`)"
    )


class Workspace:
    """Lazily computed, memoized sources of one run (config + root key)."""

    def __init__(
        self, config: CheckConfig, seed: int = 0, *, progress: Callable[[str], None] | None = None
    ):
        self.config = config
        self.seed = int(seed)
        self.root = jax.random.PRNGKey(self.seed)
        self._memo: dict[str, Any] = {}
        # claim id -> (rule, args, kwargs) of its verdict (``claims._base.graded``)
        self.graded: dict[str, tuple] = {}
        self.timings: dict[str, float] = {}  # per stage, wall seconds including nested stages
        # (stage, seconds) in the order stages end, each without the stages nested in it; never
        # written to report.json (same seed, same bytes): ``stage_timings`` reads it
        self.stages: list[tuple[str, float]] = []
        self._nested = 0.0  # seconds of the stages finished inside the one now running
        # (conversation_id, query_id) -> oas.real.QueryPlan of the oracle LoCoMo pairing, shared
        # by the readers
        self._locomo_plans: dict[tuple[str, str], Any] = {}
        self._progress = progress or (lambda msg: None)

    def provide(self, name: str, value: Any) -> None:
        """Set a source by its memo name (``sim:<preset>``, ``sim-paired:<preset>``, ``locomo:<reader>``,
        ``paired:<reader>`` (a ``PairedSource``), ``loco:<reader>``, ``theory:<scale>``): for tests
        and for callers with their own data."""
        self._memo[name] = ("ok", value)

    def key(self, name: str):
        return jax.random.fold_in(self.root, stable_id(name))

    def timed(self, stage: str, make: Callable[[], Any]) -> Any:
        """``make()``, its wall seconds recorded in ``stages`` as ``(stage, seconds)`` less the
        seconds of the stages (sources) it started, which are recorded on their own; the whole
        wall time, nested stages included, in ``timings[stage]`` (the progress line's figure)."""
        outer, self._nested = self._nested, 0.0
        t0 = time.perf_counter()
        try:
            return make()
        finally:
            wall = time.perf_counter() - t0
            self.stages.append((stage, wall - self._nested))
            self.timings[stage] = wall
            self._nested = outer + wall

    def _get(self, name: str, make: Callable[[], Any]) -> Any:
        if name not in self._memo:

            def build() -> None:
                try:
                    self._memo[name] = ("ok", make())
                except (DependencyMissing, DataMissing) as e:
                    self._memo[name] = ("err", e)

            self.timed(name, build)
            status, value = self._memo[name]
            why = f": {value}" if status == "err" else ""  # a skipped source says why
            self._progress(f"{name}: {status} ({self.timings[name]:.1f} s){why}")
        status, value = self._memo[name]
        if status == "err":
            raise value
        return value

    # ---- theory (MODEL §6) -------------------------------------------------------------------
    def theory_curves(self, scale: float = 1.0) -> SourceCurves:
        """Exact ``dU``, coverage, replacement and crossover per operator of ``config.theory``."""
        return self._get(f"theory:{scale:g}", lambda: _theory_curves(self.config, scale))

    # ---- sim (MODEL §3-5) --------------------------------------------------------------------
    def sim_curves(self, scenario: str) -> SourceCurves:
        def make():
            try:  # E[len(C)] from the paired draws claim 6 needs anyway; else from sim's queries
                length = float(np.mean(evidence_length(self.sim_paired(scenario))))
            except InputError:
                length = None
            return _sim_curves(self.key(f"sim:{scenario}"), scenario, self.config, length)

        return self._get(f"sim:{scenario}", make)

    def sim_paired(self, scenario: str):
        return self._get(
            f"sim-paired:{scenario}",
            lambda: _sim_paired(self.key(f"sim-paired:{scenario}"), scenario, self.config),
        )

    # ---- real data: LoCoMo paired here, or the user's paired files (MODEL §8-9) ------------------
    @property
    def real_tag(self) -> str:
        """``"paired"`` when the run grades ``config.paired`` files, else ``"locomo"``."""
        return "paired" if self.config.paired else "locomo"

    def unit(self, reader: str) -> str:
        """The name of ``reader``'s real-data unit: ``locomo:<reader>`` or ``paired:<reader>``."""
        return f"{self.real_tag}:{reader}"

    def real_paired(self, reader: str):
        """``oas.PairedData`` of ``reader``: its ``--paired`` file, or LoCoMo paired here. Every
        claim reads real data through this one method, so both paths share every grading step."""
        if not self.config.paired:
            return self.locomo_paired(reader)
        return self.paired_source(reader).data

    def paired_source(self, reader: str):
        """``PairedSource`` of ``reader``'s ``--paired`` file (read, validated, described once)."""
        if reader not in self.config.readers or not self.config.paired:
            raise DataMissing(f"no paired file for reader {reader!r}")
        path = self.config.paired[list(self.config.readers).index(reader)]
        return self._get(f"paired:{reader}", lambda: load_paired_source(path, reader))

    def n_groups(self, reader: str) -> int | None:
        """G: the number of groups of ``reader``'s real data; None when it is absent."""
        try:
            return len(np.unique(np.asarray(self.real_paired(reader).group_id).astype(str)))
        except (DataMissing, DependencyMissing):
            return None

    def judge_flags(self) -> list[str]:
        """One line per ``--paired`` file whose sidecar carries a flagged LLM-judge check
        (``retcon paper-checks`` says them on stderr and after the verdicts); empty otherwise."""

        if not self.config.paired:
            return []
        return judge_flag_lines([self.paired_source(r).describe() for r in self.config.readers])

    def data_sources(self) -> list[dict]:
        """What the report states about the real data read so far: per ``--paired`` file its path,
        sha256, size, group count and provenance; for LoCoMo the file and its sha256."""
        out = []
        for name, v in self.measured().items():
            if name.startswith("paired:"):
                out.append(v.describe())
            elif name.startswith("locomo:"):
                try:
                    path = locomo_path(self.config.data)
                except DataMissing:  # paired data handed to the workspace, not read from a file
                    path = None
                out.append(
                    {
                        "name": name.split(":", 1)[1],
                        "path": None if path is None else str(path),
                        "sha256": None if path is None else file_sha256(path),
                        "n_rows": int(v.n),
                        "n_queries": len(np.unique(np.asarray(v.query_id).astype(str))),
                        "n_groups": len(np.unique(np.asarray(v.group_id).astype(str))),
                        "budgets": [float(b) for b in np.unique(v.budget)],
                        "provenance": {
                            "kind": "locomo",
                            "statement": f"LoCoMo paired by this run ({name.split(':', 1)[1]} "
                            "reader, dataset operators, "
                            + (
                                "full-history BM25 candidates"
                                if self.config.protocol == "end-to-end"
                                else "oracle evidence"
                            )
                            + (", the paper's design)" if self.config.design == "paper" else ")"),
                        },
                    }
                )
        return out

    def token_tables(self) -> dict[str, list | str]:
        """Tokens beside accuracy of every real-data source read so far (``paired:<reader>``,
        ``locomo:<reader>``; the sources ``data_sources`` states), computed once per source by
        ``oas.token_table`` (memo ``tokens:<source>``): per action and budget the context tokens
        per question, the generated tokens and the gain over retention per 1,000 of each with
        conversation-clustered intervals (MODEL §2, §8).

        Returns:
          ``{source: list[oas.TokenRow]}``, or ``{source: reason}`` (a str) for a source whose
          rows carry no ``evidence_structure`` (its context tokens are unknown).
        """
        out: dict[str, list | str] = {}
        for unit, value in self.measured().items():  # a copy: the loop adds tokens:<unit>
            if unit.split(":", 1)[0] not in ("paired", "locomo"):
                continue
            data = value.data if unit.startswith("paired:") else value
            out[unit] = self._get(f"tokens:{unit}", lambda data=data: _token_block(data))
        return out

    def locomo_paired(self, reader: str):
        """``oas.PairedData`` of ``reader`` on LoCoMo (oracle evidence, MODEL §9). The readers
        share one packing and feature computation per (question, budget, action)
        (``self._locomo_plans``), dropped once every reader of ``config.readers`` has its data."""

        def make():
            try:  # the main reader's chance rate corrects claims 2-3
                return _locomo_paired(
                    self.config,
                    reader,
                    chance=reader != "llm" and reader == self.config.readers[0],
                    plans=self._locomo_plans,
                    protocol=self.config.protocol,
                )
            except InputError as e:
                if reader != "llm":
                    raise
                # an endpoint that is down or answers garbage skips the llm unit, not the run
                raise DependencyMissing(f"llm reader unavailable: {e}") from None

        try:
            return self._get(f"locomo:{reader}", make)
        finally:
            if all(f"locomo:{r}" in self._memo for r in self.config.readers):
                self._locomo_plans.clear()  # no reader left to share them with

    def locomo_end_to_end(self, type_source: str):
        """``(paired, classifier report or None)``: LoCoMo end to end under the main reader, the
        cluster retrieved by BM25 (top 4 sessions), the type ``"gold"`` or ``"predicted"`` by the
        conversation-disjoint classifier fitted on all the questions (docs/end-to-end.md)."""
        check_choice("type_source", type_source, ("gold", "predicted"))

        def make():
            reader = self.config.readers[0]
            if type_source == "gold":
                return _locomo_paired(self.config, reader, protocol="end-to-end"), None
            conversations = load_locomo(locomo_path(self.config.data)).conversations
            types, fit = predict_conversation_types(conversations)
            paired = _locomo_paired(
                self.config, reader, protocol="end-to-end", predicted_types=types
            )
            return paired, fit.as_json()

        return self._get(f"locomo-e2e:{type_source}", make)

    def real_curves(self, reader: str, *, corrected: bool = False) -> SourceCurves:
        """``dU`` curves of ``reader``'s real data; ``corrected``: outcomes minus the chance rate
        (the same context scored against another question's gold answer)."""

        def make():
            paired = self.real_paired(reader)
            outcomes = None
            if corrected:
                chance = chance_outcomes(paired)
                if chance is None:
                    raise DependencyMissing(
                        f"no chance rates stored for the {reader} reader (columns "
                        "meta_chance_<action>)"
                    )
                keep = np.isfinite(chance).all(axis=1)  # rows without a decoy: no chance rate
                paired, chance = paired.take(keep), chance[keep]
                outcomes = np.asarray(paired.outcomes, float) - chance
            return curves_from_paired(
                self.key(f"locomo-curves:{reader}"),
                paired,
                name=self.unit(reader) + (" (chance-corrected)" if corrected else ""),
                data=self.real_label(reader) + (", chance-corrected" if corrected else ""),
                n_resamples=self.config.n_resamples,
                outcomes=outcomes,
            )

        suffix = ":corrected" if corrected else ""
        return self._get(f"{self.real_tag}-curves:{reader}{suffix}", make)

    def admissibility(self, reader: str) -> dict:
        """``raw_accuracy_check`` of ``reader``'s real data (the model's premise, MODEL §2)."""
        return self._get(
            f"admissibility:{reader}",
            lambda: raw_accuracy_check(self.real_paired(reader)),
        )

    def loco(self, reader: str):
        """Leave-one-group-out choices of every policy on ``reader``'s real data."""

        def make():

            return loco_evaluate(
                self.key(f"loco:{reader}"),
                self.real_paired(reader),
                alphas=tuple(sorted({*self.config.alphas, self.config.alpha})),
                progress=self._progress,
            )

        return self._get(f"loco:{reader}", make)

    def real_label(self, reader: str) -> str:
        """``LoCoMo cat. 1-4, 500 questions in 10 conversations, dataset operators, lexical reader``,
        or the ``--paired`` file's one line (``PairedSource.label``)."""
        if self.config.paired:
            return self.paired_source(reader).label()
        paired = self.locomo_paired(reader)
        n_q = len(np.unique(np.asarray(paired.query_id).astype(str)))
        n_c = len(np.unique(np.asarray(paired.group_id).astype(str)))
        return f"LoCoMo cat. 1-4, {n_q} questions in {n_c} conversations, dataset operators, {reader} reader"

    def second_reader(self):
        """``PairedSource`` of ``config.second_reader`` (Table 5's rows), read once and checked
        against the main reader's rows (``paper_checks.tables._design.check_second_reader``).

        Raises:
          InputError: naming ``--second-reader`` and the file: unreadable, or not of the main
            rows' design, dataset, question ids or budgets.
        """
        path = self.config.second_reader
        if path is None:
            raise DataMissing("no --second-reader file")

        def make():

            if not Path(path).is_file():
                raise InputError(
                    f"{SECOND_READER_OPTION}: no such file {str(path)!r}; expected a paired-data "
                    "file of a second answer model."
                )
            try:
                src = load_paired_source(path)
            except InputError as e:
                raise InputError(f"{SECOND_READER_OPTION} {path}: {e}") from None
            check_second_reader(self.real_paired(self.config.readers[0]), src.data, str(path))
            return src

        return self._get("second-reader", make)

    def paper_tables(self) -> dict | None:
        """The ``tables`` block of ``--design paper`` (``paper_checks.tables._design``): Tables 4 and 8
        beside the paper's on the main reader's LoCoMo; ``None`` under our design."""
        if self.config.design != "paper":
            return None

        def make():

            main = self.real_paired(self.config.readers[0])
            if self.config.second_reader is None:
                return paper_tables(self.key("tables"), main)
            return paper_tables(self.key("tables"), main, second_reader=self.second_reader())

        try:
            return self._get("tables", make)
        except (DataMissing, DependencyMissing) as e:
            return skipped_tables(str(e))

    def measured(self) -> dict:
        """``{name: value}`` of every source computed so far, in the order computed (the figures,
        the data graded and the tokens read it)."""
        return {k: v for k, (status, v) in self._memo.items() if status == "ok"}


# ---- adapters to the other packages --------------------------------------------------------------


def _theory_curves(config: CheckConfig, scale: float) -> SourceCurves:
    """The exact single-cluster model (MODEL §6) with every length parameter multiplied by ``scale``
    (§6.5: ``B*`` scales with it), on 61 budgets from ``E[L]/64`` to ``16 E[L]``."""
    tm = config.theory
    params = {k: (v * scale if k in _LENGTH_PARAMS else v) for k, v in tm.params.items()}
    dist = make_length_dist(tm.dist, **params)
    mean = float(dist.mean)  # property of theory.LengthDist
    budgets = np.geomspace(mean / 64, mean * 16, 61)
    ops = {}
    for op in OPERATORS:
        if op not in tm.compress_ratio:
            continue
        kw = dict(
            compress_ratio=tm.compress_ratio[op],
            fidelity=tm.fidelity[op],
            acc_raw=tm.acc_raw,
            acc_guess=tm.acc_guess,
        )
        dec = delta_curve(dist, budgets, **kw)
        cross = crossover(dist, **kw)
        b_star = cross.crossover_budget
        d = np.asarray(dec.delta, float)
        ops[op] = OperatorCurve(
            budgets,
            d,
            d,
            d,
            np.asarray(dec.coverage, float),
            np.asarray(dec.replacement, float),
            Estimate.exact(np.nan if b_star is None else b_star),
            str(cross.status),
        )
    return SourceCurves(
        f"theory{'' if scale == 1 else f'x{scale:g}'}",
        f"single-cluster model (MODEL §6), {tm.dist} lengths {params}",
        ops,
        mean,
        "theory",
    )


def _token_block(data) -> list | str:
    """``oas.token_table(data)``, or why it is not measured: rows without ``evidence_structure``
    (what each action packs under the budget is unknown, MODEL §2)."""
    structure = data.meta.get("evidence_structure")
    if structure is None or all(v is None for v in structure):
        return (
            "the rows carry no evidence_structure, so the tokens each action places in context "
            "are unknown (retcon pair records it)"
        )
    return token_table(data)


# parameters of theory's length distributions that are lengths (scaled by `scale`); shapes are not
_LENGTH_PARAMS = ("mean", "length", "max", "scale")


def _sim_curves(
    key, scenario: str, config: CheckConfig, length: float | None = None
) -> SourceCurves:
    scen = load_scenario(scenario)
    res = simulate(key, scen, n_queries=config.sim_queries, progress=False)
    crossovers = _sim_crossovers(jax.random.fold_in(key, 1), res, config.n_resamples)
    return sim_result_to_curves(
        res,
        crossovers,
        name=f"sim:{scenario}",
        data=f"sim preset {scenario}, {config.sim_queries} queries",
        evidence_length=sim_mean_length(key, scen) if length is None else length,
    )


def _sim_crossovers(key, res, n_resamples: int) -> dict:
    """``{operator: (Estimate, status)}`` from sim's bootstrap crossover over query blocks."""
    c = simulated_crossover(key, res, n_resamples=n_resamples)
    out = {}
    for k, op in enumerate(OPERATORS):
        b = float(c.crossover_budget[k])
        out[op] = (
            Estimate(b, float(c.ci_lower[k]), float(c.ci_upper[k]))
            if np.isfinite(b)
            else Estimate.missing(),
            str(c.status[k]),
        )
    return out


def sim_result_to_curves(
    res, crossovers: dict, *, name: str, data: str, evidence_length: float
) -> SourceCurves:
    """Normalize a ``sim.simulate`` result (``delta``/``delta_se``/``coverage``/``replacement`` of
    shape ``(3, nB)``) into ``SourceCurves``; bands are ``delta +- 1.96 SE``; a crossover sim does
    not give is read off the curve with a band interval."""
    budgets = np.asarray(res.budgets, float)
    ops = {}
    for k, op in enumerate(OPERATORS):
        delta = np.asarray(res.delta, float)[k]
        se = np.asarray(res.delta_se, float)[k]
        lo, hi = delta - 1.96 * se, delta + 1.96 * se
        if op in crossovers:
            cross, status = crossovers[op]
        else:
            gc = grid_crossover(budgets, delta)
            b_star = float(gc.crossover_budget)
            cross = Estimate(b_star, np.nan, np.nan) if np.isfinite(b_star) else Estimate.missing()
            status = str(gc.status)
        ops[op] = OperatorCurve(
            budgets,
            delta,
            lo,
            hi,
            np.asarray(res.coverage, float)[k],
            np.asarray(res.replacement, float)[k],
            cross,
            status,
        )
    return SourceCurves(name, data, ops, float(evidence_length), "sim")


def sim_mean_length(key, scenario, n: int = 4000) -> float:
    """Mean raw cluster length ``E[len(C)]`` of a scenario's queries (tokens), from drawn queries."""
    q = simulate_queries(jax.random.fold_in(key, 7), scenario, n)
    lengths = np.asarray(q.record_lengths, float) * np.asarray(q.record_mask, float)
    return float(lengths.sum(axis=-1).mean())


def _sim_paired(key, scenario: str, config: CheckConfig):
    """Simulated paired data (``oas.simulate_paired``) on ``config.sim_paired_budgets`` budgets spread
    evenly (in log) over the preset's grid, so the instances make many queries and groups."""
    grid = np.asarray(load_scenario(scenario).budgets, float)
    idx = np.unique(
        np.round(np.linspace(0, grid.size - 1, min(config.sim_paired_budgets, grid.size))).astype(
            int
        )
    )
    return simulate_paired(key, scenario, config.sim_instances, budgets=grid[idx])


def llm_configured() -> bool:
    """Whether an OpenAI-compatible endpoint and model are configured in the environment (MODEL §9)."""
    env = os.environ
    return bool(
        (env.get("RETCON_LLM_BASE_URL") or env.get("OPENAI_BASE_URL"))
        and env.get("RETCON_LLM_MODEL")
    )


def locomo_conversations(config: CheckConfig, path):
    """LoCoMo's conversations from ``path``, with ``config.locomo_audit`` applied when set."""
    loaded = load_locomo(path)
    if config.locomo_audit is None:
        return loaded.conversations
    modes = parse_audit_modes(config.audit_mode, "CheckConfig.audit_mode")
    return apply_audit(loaded, config.locomo_audit, modes).loaded.conversations


def _locomo_paired(
    config: CheckConfig,
    reader: str,
    *,
    chance: bool = False,
    protocol: str = "oracle",
    predicted_types: dict | None = None,
    plans: dict | None = None,
):
    """LoCoMo paired data (MODEL §9): dataset operators, the given reader, ``config.budgets``.

    ``plans`` (``(conversation_id, query_id) -> oas.real.QueryPlan``, filled as it goes) holds the reader-independent
    part of the rows (packing, features; ``oas.real.prepare_query_rows``) so that other readers of
    the same ``config`` and ``protocol`` reuse it; only the readers' scores are computed per reader.
    Pass the same dict only to calls whose ``config``, ``protocol`` and ``predicted_types`` agree.

    ``protocol="end-to-end"``: the cluster is what BM25 retrieves over the conversation's sessions
    (``oas.real.PairConfig``, docs/end-to-end.md), and the type feature is ``predicted_types``'s
    (``query_id -> type``) when given, else the gold type.

    With ``config.locomo_limit = n`` (``config.llm_limit`` for the ``llm`` reader) the first
    ``ceil(n / 10)`` questions of every conversation are used (not the first n of the file), so
    every conversation stays a group. With ``chance`` every context is scored a second time
    against a decoy, the gold answer of the next used question of the same conversation whose
    answer differs; the scores are stored as ``meta_chance_<action>`` (the chance rate of the
    reader: how often a context "contains" an answer it was not built for), NaN on the rows of a
    question with no such answer (kept: only the chance-corrected unit leaves them out).

    With ``config.locomo_audit`` and ``config.audit_sample == "same"`` the questions are chosen
    on LoCoMo as released (``chosen_query_ids``) and the audit then applies to them, so the
    audited run grades the same sample less the questions the audit drops.
    """
    path = locomo_path(config.data)
    conversations = locomo_conversations(config, path)
    paper = config.design == "paper"
    # the paper's budgets, granularity, packing and token count over ours (MODEL §11)
    overlay = design_overlay(config.design, "locomo", protocol)
    tokenizer = overlay.pop("tokenizer", "regex")
    pc = PairConfig(
        budgets=tuple(int(b) for b in config.budgets),
        granularity="session",
        packing="cut",
        protocol=protocol,
        predicted_types=predicted_types,
        design=config.design,
        features=config.features,
    )
    pc = dataclasses.replace(pc, **overlay)
    operators, rdr, tok = (
        make_operators("dataset"),
        make_reader(reader),
        make_tokenizer(tokenizer),
    )
    limit = config.llm_limit if reader == "llm" else config.locomo_limit
    same = config.locomo_audit is not None and config.audit_sample == "same"
    # the questions are chosen on LoCoMo as released, then the audit applies to them: the
    # audited run grades the same sample, less its dropped questions (``audit_sample="same"``)
    chosen = chosen_query_ids(
        load_locomo(path).conversations if same else conversations, paper=paper, limit=limit
    )
    plans = {} if plans is None else plans
    rows = []
    for conv in conversations:
        queries = [q for q in conv.queries if q.query_id in chosen]
        ctx = None  # built only when a query of the conversation has no plan yet
        for i, q in enumerate(queries):
            key = (conv.conversation_id, q.query_id)
            if key not in plans:
                if ctx is None:
                    ctx = ConversationContext(conv, pc.granularity, make_embedder())
                plans[key] = prepare_query_rows(
                    q, ctx, operators=operators, config=pc, tokenizer=tok
                )
            plan = plans[key]
            mine = score_query_rows(plan, q, rdr)
            if chance:
                decoy = _decoy_answer(queries, i)
                # the plan does not read the answer: the decoy is scored on the same contexts;
                # no other answer in the conversation: the row is kept without a chance rate
                # (NaN), left out of the chance-corrected unit only
                other = (
                    [{} for _ in mine]
                    if decoy is None
                    else score_query_rows(plan, dataclasses.replace(q, answer=decoy), rdr)
                )
                for row, o in zip(mine, other):
                    for a in ("ret", *OPERATORS):
                        row[f"meta_chance_{a}"] = o.get(f"y_{a}", float("nan"))
            rows.extend(mine)
    return paired_from_rows(rows, source=f"{path.name} ({reader} reader)")


def chosen_query_ids(conversations, *, paper: bool, limit: int | None) -> set[str]:
    """The question ids a LoCoMo run uses: the paper's stratified outcome-blind sample
    (``paper``, MODEL §11), else the first ``ceil(limit / G)`` questions of every conversation
    (all with ``limit`` None), so every conversation stays a group."""
    if paper:
        return {q.query_id for _, q in paper_sample_queries(conversations)}
    per_conv = None if limit is None else -(-limit // max(len(conversations), 1))
    return {
        q.query_id
        for c in conversations
        for q in (c.queries if per_conv is None else c.queries[:per_conv])
    }


def _decoy_answer(queries, i: int):
    """The gold answer of the next query after ``i`` (cyclically) whose normalized answer differs."""
    mine = normalize(str(queries[i].answer))
    for step in range(1, len(queries)):
        other = queries[(i + step) % len(queries)].answer
        if normalize(str(other)) != mine:
            return other
    return None
