"""How far each data command is from its floor, in one run (issue 47): ``pair simulate``,
reading a paired file, ``evaluate`` and ``identify``, each a whole process on the file that
``retcon pair simulate --instances N`` writes, against the floor of its unavoidable work measured
in this same run.

Each command runs twice in a fresh process: the first run fills XLA's persistent compilation
cache (``retcon.commands.common.enable_compile_cache``), its CPU is reported as ``cold_cpu_s``; the second is
the row's ``cpu_s`` and ``peak_mib`` (``os.wait4``'s user + system time and maximum resident set).
Each command is forked from a small helper process, so its peak is its own. The floors, in
this process, best of three:

- writing (``pair simulate``): ``json.dumps`` of every row of the file, to a string;
- parsing (reading, and part of every command that takes ``--data``): ``json.loads`` of every
  line of the file;
- the k-NN baseline (``evaluate``): the chunked BLAS distances and ``np.argpartition`` of the
  neighbour search at the evaluate's shapes (the 70% of groups it fits on against the 30% it
  scores), once;

``evaluate``'s floor is parsing plus its k-NN search; ``identify``'s is parsing alone (its
maximum-likelihood fits have no simpler competitor). ``ratio`` is ``cpu_s / floor_cpu_s``.

References: MODEL §8 (paired data, baselines).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._floor_stages import floor_stage_rows

# Runs the command as its own child and reports that child's exit code, CPU and peak: a process
# forked from this one would count this process's memory in its peak (Linux keeps the high-water
# mark across exec), so the command is forked from this small helper instead.
_HELPER = """
import json, os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
print(json.dumps([os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime, ru.ru_maxrss]))
"""


def _child(argv: list[str]) -> tuple[float, float]:
    """Run ``argv``; return its CPU seconds (user + system) and peak resident MiB."""
    r = subprocess.run(
        [sys.executable, "-c", _HELPER, *argv], capture_output=True, text=True, check=False
    )
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()[-400:]}")
    code, cpu, peak_kib = json.loads(r.stdout.strip().splitlines()[-1])
    if code != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {code}: {r.stderr.strip()[-400:]}")
    return float(cpu), peak_kib / 1024


def _best_cpu(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _knn_floor(data) -> None:
    """The k-NN search of ``oas.evaluate``'s baseline at its shapes: fit on 70% of the rows,
    query the other 30%, the 25 nearest, standardized features."""
    from oas import nearest_neighbours, standardise

    n = data.n
    cut = int(0.7 * n)
    xs, xt = standardise(data.features[:cut], data.features[cut:])
    nearest_neighbours(xs, xt, 25)


def bench_floors(
    seed: int, instances: int, *, workdir: str | None = None, by_stage: bool = True
) -> list[dict]:
    """One row per command: ``command``, ``cold_cpu_s``, ``cpu_s``, ``peak_mib``, ``floor``,
    ``floor_cpu_s``, ``ratio``, with the machine's load average when it ran; with ``by_stage``,
    ``stages``: the command's rows of ``benchmarks._floor_stages.floor_stage_rows`` (each stage
    against its floor, and the command's total against the sum of its stage floors)."""
    retcon = [sys.executable, "-m", "retcon"]
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = str(Path(tmp) / "paired.jsonl")
        commands = {
            "pair simulate": [
                *retcon,
                *("pair", "simulate", "--instances", str(instances), "--seed", str(seed)),
                *("--output", path, "-q"),
                # a small file (a smoke run) spread over 10 groups, which evaluate's split needs
                *(("--groups", "10") if instances < 2000 else ()),
            ],
            "read": [
                sys.executable,
                "-c",
                f"from oas import read_paired; read_paired({path!r})",
            ],
            "evaluate": [*retcon, "evaluate", "--data", path, "--json", "-q"],
            "identify": [*retcon, "identify", "--data", path, "--json", "-q"],
        }
        measured = {}
        for name, argv in commands.items():
            cold, _ = _child(argv)
            cpu, peak = _child(argv)
            measured[name] = (cold, cpu, peak, list(os.getloadavg()))
        lines = Path(path).read_text().splitlines()
        rows = [json.loads(line) for line in lines]
        parse = _best_cpu(lambda: [json.loads(line) for line in lines])
        write = _best_cpu(lambda: "".join(json.dumps(r) + "\n" for r in rows))
        from oas import read_paired

        data = read_paired(path)
        knn = _best_cpu(lambda: _knn_floor(data))
        stages = (
            floor_stage_rows(path, instances, seed, {k: v[1] for k, v in measured.items()})
            if by_stage
            else []
        )
    floors = {
        "pair simulate": ("json.dumps of the rows", write),
        "read": ("json.loads of the lines", parse),
        "evaluate": ("json.loads of the lines + the k-NN search", parse + knn),
        "identify": ("json.loads of the lines", parse),
    }
    out = []
    for name, (cold, cpu, peak, load) in measured.items():
        what, floor = floors[name]
        out.append(
            {
                "command": name,
                "instances": instances,
                "cold_cpu_s": cold,
                "cpu_s": cpu,
                "peak_mib": peak,
                "floor": what,
                "floor_cpu_s": floor,
                "ratio": cpu / floor if floor > 0 else float("nan"),
                "loadavg": load,
                "stages": [r for r in stages if r["command"] == name],
            }
        )
    return out
