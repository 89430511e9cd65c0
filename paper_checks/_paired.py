"""Paired files as the claims' real data: ``retcon paper-checks --paired FILE``.

A paired file (docs/paired-data.md) is graded as data, whatever produced it: ``retcon pair
locomo --reader llm``, a user's own agent logs, LongMemEval paired elsewhere, or ``retcon pair
simulate``. ``load_paired_source`` reads and validates it with ``oas.read_paired`` (malformed files
raise its one-line ``InputError``), fills ``len(C)`` from ``evidence_structure`` where the file
gives no ``cluster_tokens`` (below), and records what the report states about it: the path, its
sha256, its size (rows, questions, groups, budgets) and its provenance, from the file's sidecar
``<file>.meta.json`` (written by ``retcon pair``) and its ``meta_*`` columns where present.

A sidecar whose ``judge_check`` flagged its judge (``retcon pair --llm-judge llm``: a false-acceptance
rate on wrong answers above ``--judge-threshold``) is said in the provenance (``judge_flagged``:
the run's judge-check line), in the file's one-line label, and so in every verdict graded on it
(``judge_flag_lines``): those accuracies were judged by a lenient judge (docs/llm.md, "Checking the
judge").

The result is the same in-memory representation (``oas.PairedData``) as LoCoMo paired by the
workspace itself, so every grading step downstream is shared (``paper_checks.claims._sources.Workspace``).

``len(C)`` (claims 5-7: evidence length and ``q in G_B``): the stored ``cluster_tokens``; in a row
without it, the summed lengths of the records ``evidence_structure`` flags as evidence in
``ret``'s context (the raw evidence units retention has to fit). Both agree on every row that
``retcon pair simulate`` and ``retcon pair locomo`` (oracle protocol) write.

References: MODEL §3 (``G_B``), §6.5 (evidence length), §8 (paired data).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from oas import read_paired
from retcon.errors import InputError
from retcon.output import file_sha256
from retcon.vocab import ACTIONS

STRUCTURE = "evidence_structure"


class PairedSource(NamedTuple):
    """One ``--paired`` file, read and described for the report.

    Attributes:
      name: the reader's name in the report (``--reader-name``, default the file's stem).
      path: the file as given.
      sha256: hex digest of the file's bytes.
      data: ``oas.PairedData``, ``cluster_tokens`` filled where ``evidence_structure`` gives it.
      n_rows, n_queries, n_groups: rows, distinct ``query_id``, distinct ``group_id`` (G).
      budgets: the distinct budgets, ascending.
      length_source: how ``len(C)`` was obtained: ``{"cluster_tokens": rows, "evidence_structure":
        rows, "missing": rows}``.
      provenance: ``{"kind": "simulated" | "paired" | "unknown", "statement": str, "sidecar": dict |
        None}``.
    """

    name: str
    path: str
    sha256: str
    data: Any
    n_rows: int
    n_queries: int
    n_groups: int
    budgets: tuple
    length_source: dict
    provenance: dict

    def describe(self) -> dict:
        """The JSON block the report carries for this file (everything but the data)."""
        return {k: v for k, v in self._asdict().items() if k != "data"}

    def label(self) -> str:
        """One line for a claim's data column (ending ``; judge FLAGGED`` for a flagged judge)."""
        flag = "; judge FLAGGED" if self.provenance.get("judge_flagged") else ""
        return (
            f"paired file {Path(self.path).name} (sha256 {self.sha256[:12]}), reader {self.name}: "
            f"{self.n_queries} questions in {self.n_groups} groups, {len(self.budgets)} budgets; "
            f"{self.provenance['kind']}{flag}"
        )


def evidence_from_structure(structures) -> np.ndarray:
    """``(n,)`` summed token lengths of ``ret``'s evidence-flagged records per row; NaN where a row
    has no ``evidence_structure`` (``None``)."""
    out = np.full(len(structures), np.nan)
    for i, s in enumerate(structures):
        if isinstance(s, dict):
            lengths, flags = s["lengths"]["ret"], s["evidence"]["ret"]
            out[i] = float(sum(float(n) for n, f in zip(lengths, flags) if f))
    return out


def fill_cluster_tokens(data) -> tuple[Any, dict]:
    """``(data, counts)``: ``cluster_tokens`` filled from ``evidence_structure`` where not finite;
    ``counts`` says how many rows got ``len(C)`` from which column and how many have none."""
    n = data.n
    stored = (
        np.full(n, np.nan)
        if data.cluster_tokens is None
        else np.asarray(data.cluster_tokens, dtype=np.float64)
    )
    have = np.isfinite(stored)
    derived = (
        evidence_from_structure(data.meta[STRUCTURE])
        if STRUCTURE in data.meta
        else np.full(n, np.nan)
    )
    fill = ~have & np.isfinite(derived) & (derived > 0)
    tokens = np.where(have, stored, np.where(fill, derived, np.nan))
    counts = {
        "cluster_tokens": int(have.sum()),
        "evidence_structure": int(fill.sum()),
        "missing": int((~have & ~fill).sum()),
    }
    return data._replace(cluster_tokens=tokens), counts


def flagged_judge(sidecar: dict | None) -> str | None:
    """The judge-check line of a sidecar whose judge was flagged (``judge_check.probe.flagged``,
    written by ``retcon pair --llm-judge llm``); None without a check or for a judge within its
    threshold."""
    check = (sidecar or {}).get("judge_check")
    probe = check.get("probe") if isinstance(check, dict) else None
    if not isinstance(probe, dict) or probe.get("flagged") is not True:
        return None
    line = check.get("line") if isinstance(check, dict) else None
    if isinstance(line, str) and line:
        return line
    rate, threshold = probe.get("rate"), probe.get("threshold")
    return (
        f"judge check: false acceptance {rate} of {probe.get('n_decoys')} wrong answers; FLAGGED: "
        f"above the {threshold} threshold"
    )


def judge_flag_lines(data) -> list[str]:
    """One line per graded file whose judge was flagged (``data``: ``Workspace.data_sources()``,
    the described files): its name, its path and the run's judge-check line."""
    out = []
    for d in data:
        line = (d.get("provenance") or {}).get("judge_flagged")
        if line:
            out.append(
                f"judge FLAGGED for --paired {d.get('path')} (reader {d.get('name')}): {line}; "
                "every verdict graded on this file rests on its accuracies"
            )
    return out


def provenance(path: Path, data) -> dict:
    """What produced the file, from its sidecar ``<file>.meta.json`` and its ``meta_*`` columns."""
    side = Path(f"{path}.meta.json")
    sidecar: dict | None = None
    if side.is_file():
        try:
            loaded = json.loads(side.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = None
        sidecar = loaded if isinstance(loaded, dict) else {"unreadable": str(side)}
    info = sidecar or {}
    command = str(info.get("command", ""))
    raw_cfg = info.get("config")
    cfg: dict = raw_cfg if isinstance(raw_cfg, dict) else {}
    if command == "retcon pair simulate" or all(f"meta_p_{a}" in data.meta for a in ACTIONS):
        if command:
            why = f"sidecar {side.name}: {command}" + "".join(
                f", {k} {cfg[k]}" for k in ("scenario",) if k in cfg
            )
        else:
            why = (
                "the rows carry meta_p_<action> (true success probabilities), as "
                "`retcon pair simulate` writes"
            )
        return {
            "kind": "simulated",
            "statement": f"SIMULATED data ({why}): the verdicts grade the simulator, not a model",
            "sidecar": sidecar,
        }
    if command:
        bits = [f"{k} {cfg[k]}" for k in ("dataset", "reader", "operators") if k in cfg]
        out = {
            "kind": "paired",
            "statement": f"sidecar {side.name}: {command}"
            + (f" ({', '.join(bits)})" if bits else ""),
            "sidecar": sidecar,
        }
        flag = flagged_judge(sidecar)
        if flag is not None:  # only then: the provenance of other files stays as it was
            out["statement"] += f"; {flag}"
            out["judge_flagged"] = flag
        return out
    proto = data.meta.get("meta_protocol")
    extra = f"; meta_protocol {sorted(set(map(str, proto)))}" if proto is not None else ""
    return {
        "kind": "unknown",
        "statement": f"no sidecar ({side.name} absent): provenance as the user states it{extra}",
        "sidecar": None,
    }


def load_paired_source(path, name: str | None = None) -> PairedSource:
    """Read, validate and describe one ``--paired`` file (module docstring).

    Raises:
      InputError: no such file, or the paired reader's one-line error (file, line, field).
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--paired: no such file {str(path)!r}; expected a paired-data file.")
    data, counts = fill_cluster_tokens(read_paired(p))
    return PairedSource(
        name=name or p.stem,
        path=str(path),
        sha256=file_sha256(p),
        data=data,
        n_rows=data.n,
        n_queries=len(np.unique(np.asarray(data.query_id).astype(str))),
        n_groups=len(np.unique(np.asarray(data.group_id).astype(str))),
        budgets=tuple(float(b) for b in np.unique(data.budget)),
        length_source=counts,
        provenance=provenance(p, data),
    )
