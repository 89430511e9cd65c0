"""Each data command's stages against the floor of that stage, measured in one run (issue 47).

A command's floor is the sum of the floors of the stages it must compute; each stage floor is that
stage's computation written the most direct way a numpy/JAX user would, doing no more than the
stage needs (docs/performance.md, "Floors by stage"):

- start-up: a fresh interpreter that imports numpy and JAX and makes one array;
- parse: ``json.loads`` of every line of the file;
- draw (``pair simulate``): the compiled draw kernel run a second time in its process (no tracing,
  no loading of the compiled program), with its numpy gathers;
- rows and writing (``pair simulate``): ``json.dumps`` of every row, the row dicts given;
- ridge (``evaluate``): standardise on the training fold, one Gram matrix per fold and one
  ``np.linalg.solve`` per fold and penalty for the four actions, then the refit on all rows;
- MLP (``evaluate``): the same grid (3 widths x 3 inner grouped folds, 3 decays batched, early
  stopping with the same patience, then the refit) as a bare jitted ``optax`` loop on the unpadded
  rows (rows last, as the library lays them out), compiled before it is timed;
- k-NN (``evaluate``): the inner grouped folds and the final search, each the chunked BLAS distances
  and ``np.argpartition`` for the 25 nearest, no tie handling;
- intervals (``evaluate``): per budget slot, group means by ``np.add.reduceat`` and the Student-t
  interval;
- token table and JSON (``evaluate``): ``json.dumps`` of the finished result object (the token
  table's group means and intervals are left out of the floor: under-counted, never inflated).

The command's time in each stage comes from a child process that runs the command's own steps
through the public API (``oas.read_paired``, ``oas.evaluate`` with its ``progress`` hook as stage
timer, ``oas.simulate_paired_chunks``, ...), timed with ``time.process_time``. Stages with no floor
written (the theory router's and ``identify``'s maximum-likelihood fits, whose direct form is the
fit itself) are listed with their time and no ratio.

References: MODEL §8 (paired data, ridge, baselines, the MLP control).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import time

import numpy as np

#: The child that times a command's stages: ``python -m benchmarks._floor_stages CMD PATH N``.
_STARTUP_FLOOR = "import numpy, jax; jax.numpy.zeros(1).block_until_ready()"


def _cpu() -> float:
    return time.process_time()


def _stages_pair(path: str, instances: int, seed: int) -> dict:
    t = {"interpreter": _cpu()}
    c = _cpu()
    import jax

    import oas
    import sim
    from retcon.commands.common import enable_compile_cache

    enable_compile_cache()
    t["imports"] = _cpu() - c
    config = sim.load_scenario(sim.DEFAULT_PRESET)
    k_inst, _ = jax.random.split(jax.random.key(seed))
    c = _cpu()
    sim.simulate_instances(k_inst, config, instances)
    t["draw"] = _cpu() - c
    c = _cpu()
    sim.simulate_instances(k_inst, config, instances)
    warm = _cpu() - c
    c = _cpu()
    oas.write_paired_chunks(
        path, oas.simulate_paired_chunks(jax.random.key(seed), config, instances)
    )
    t["rows and writing"] = _cpu() - c - warm
    t["draw, warm"] = warm
    return t


def _stages_read(path: str) -> dict:
    t = {"interpreter": _cpu()}
    c = _cpu()
    from oas import read_paired

    t["imports"] = _cpu() - c
    c = _cpu()
    read_paired(path)
    t["read"] = _cpu() - c
    return t


def _stages_evaluate(path: str, seed: int) -> dict:
    t = {"interpreter": _cpu()}
    c = _cpu()
    from oas import read_paired

    t["imports"] = _cpu() - c
    c = _cpu()
    data = read_paired(path)
    t["read"] = _cpu() - c
    c = _cpu()
    import jax

    from oas import evaluate, evaluation_json, group_split, knn_router, token_json, token_table
    from retcon.commands.common import enable_compile_cache

    enable_compile_cache()
    t["imports"] += _cpu() - c
    marks = []
    c = _cpu()
    ev = evaluate(
        jax.random.key(seed), data, progress=lambda done, total, stage: marks.append(_cpu())
    )
    end = _cpu()
    t["split"] = marks[0] - c
    t["ridge fit and calibration"] = marks[1] - marks[0]
    t["MLP control"] = marks[2] - marks[1]
    baselines = marks[3] - marks[2]
    t["intervals"] = end - marks[3]
    c = _cpu()
    text = json.dumps({**evaluation_json(ev), "tokens": token_json(token_table(data))})
    t["token table and JSON"] = _cpu() - c
    with open(path + ".evaluate.json", "w", encoding="utf-8") as f:
        f.write(text)
    t["interval columns"] = len(ev.policies) * len(ev.point[0]) + len(ev.info["differences"])
    # the k-NN router's share of the baselines stage: the same call again (numpy, no compilation)
    part = group_split(jax.random.split(jax.random.key(seed), 4)[0], data.group_id, (0.5, 0.2, 0.3))
    seen, test = data.take(part != 2), data.take(part == 2)
    c = _cpu()
    knn_router(seen.features, seen.outcomes, seen.group_id, test.features, n_folds=5)
    t["k-NN router"] = _cpu() - c
    t["theory router and the other policies"] = baselines - t["k-NN router"]
    return t


def _stages_identify(path: str) -> dict:
    """``_stages_read``, then JAX's import (the fits are the rest of the whole process)."""
    t = _stages_read(path)
    c = _cpu()
    import jax  # noqa: F401

    import oas  # noqa: F401

    t["imports"] += _cpu() - c
    return t


def _child_stages(command: str, path: str, instances: int, seed: int) -> dict:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks._floor_stages",
            command,
            path,
            str(instances),
            str(seed),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        raise RuntimeError(f"stage timing of {command}: {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _best(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        c = _cpu()
        fn()
        best = min(best, _cpu() - c)
    return best


def startup_floor(code: str = _STARTUP_FLOOR) -> float:
    """CPU seconds of a fresh interpreter that runs ``code`` (by default: imports numpy and JAX
    and makes one array), best of three."""
    best = float("inf")
    for _ in range(3):
        r = subprocess.run(
            [sys.executable, "-c", code + "; import time; print(time.process_time())"],
            capture_output=True,
            text=True,
            check=True,
        )
        best = min(best, float(r.stdout.split()[-1]))
    return best


def ridge_floor(x, y, groups, penalties, n_folds: int = 5) -> None:
    """Grouped K-fold ridge over ``penalties`` for the columns of ``y``, closed form, then the
    refit at each column's best penalty. Shapes ``(n, p)``, ``(n, A)``, ``(n,)``."""
    fold = np.unique(groups, return_inverse=True)[1] % n_folds
    p = x.shape[1]
    eye = np.eye(p)
    sse = np.zeros((len(penalties), y.shape[1]))

    def moments(rows):
        m, s = x[rows].mean(0), x[rows].std(0)
        s = np.where(s > 0, s, 1.0)
        z = (x[rows] - m) / s
        ym = y[rows].mean(0)
        return m, s, z.T @ z, z.T @ (y[rows] - ym), ym

    for f in range(n_folds):
        fit, held = fold != f, fold == f
        m, s, gram, xty, ym = moments(fit)
        zh = (x[held] - m) / s
        for i, lam in enumerate(penalties):
            beta = np.linalg.solve(gram + lam * eye, xty)
            sse[i] += ((zh @ beta + ym - y[held]) ** 2).sum(0)
    best = np.asarray(penalties)[np.argmin(sse, axis=0)]
    _, _, gram, xty, _ = moments(np.ones(len(x), bool))
    for lam in np.unique(best):
        np.linalg.solve(gram + lam * eye, xty)


def knn_floor(x, y, groups, test_x, k: int = 25, n_folds: int = 5) -> None:
    """The k-NN router's searches: each inner grouped fold against the rest, then the test rows
    against all; chunked BLAS distances and ``np.argpartition``, the mean outcomes of the k."""

    def search(train, query):
        m, s = train.mean(0), train.std(0)
        s = np.where(s > 0, s, 1.0)
        a, b = (train - m) / s, (query - m) / s
        sq = (a**2).sum(1)
        step = max(1, (1 << 20) // len(a))
        for lo in range(0, len(b), step):
            d2 = sq - 2.0 * (b[lo : lo + step] @ a.T)
            near = np.argpartition(d2, k - 1, axis=1)[:, :k]
            y_fit[near].mean(axis=1)

    fold = np.unique(groups, return_inverse=True)[1] % n_folds
    for f in range(n_folds):
        y_fit = y[fold != f]
        search(x[fold != f], x[fold == f])
    y_fit = y
    search(x, test_x)


def interval_floor(values, groups, slots) -> None:
    """Per slot (a row mask), the mean over groups of each column's group mean and its Student-t
    interval: one stable sort by group, then ``np.add.reduceat`` per slot."""
    from scipy.stats import t as student_t

    inv = np.unique(groups, return_inverse=True)[1]
    order = np.argsort(inv, kind="stable")
    for s in slots:
        rows = order[s[order]]
        g = inv[rows]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        means = np.add.reduceat(values[rows], starts) / np.diff(np.r_[starts, len(rows)])[:, None]
        n_g = len(starts)
        half = student_t.ppf(0.975, n_g - 1) * means.std(0, ddof=1) / np.sqrt(n_g)
        centre = means.mean(0)
        _ = centre - half, centre + half


def mlp_floor_fn(key, x, y, groups, *, n_folds=3, widths=(4, 8, 16), decays=(0.1, 0.01, 0.001)):
    """A callable that trains the MLP control's grid the bare way (module docstring); compiled
    by a first call before it is timed."""
    import jax
    import jax.numpy as jnp
    import optax

    from oas import grouped_folds

    k_fold, k_init = jax.random.split(key)
    fold = np.asarray(grouped_folds(k_fold, np.asarray(groups).astype(str), n_folds))
    sd = x.std(0)
    # rows last, (p, n) and (4, n), as the library's trainer lays them out
    z = jnp.asarray(((x - x.mean(0)) / np.where(sd > 1e-6, sd, 1.0)).T, jnp.float32)
    yy = jnp.asarray(np.asarray(y).T, jnp.float32)
    p = x.shape[1]
    k1, k2 = jax.random.split(k_init)
    w1 = jax.random.normal(k1, (p, 16)) * np.sqrt(2.0 / p)
    w2 = jax.random.normal(k2, (16, 4))

    @jax.jit
    def train(w_fit, w_val, width, cap):
        mask = (jnp.arange(16) < width).astype(jnp.float32)
        m = jnp.clip((yy @ w_fit) / w_fit.sum(), 0.01, 0.99)
        init = (w1, jnp.zeros(16), w2 / jnp.sqrt(width), jnp.log(m / (1 - m)))

        def one(decay):
            opt = optax.adamw(3e-2, weight_decay=decay)

            def losses(params):
                a, b, c, d = params
                logits = c.T @ (jax.nn.relu(a.T @ z + b[:, None]) * mask[:, None]) + d[:, None]
                row = jnp.mean(jax.nn.softplus(logits) - yy * logits, axis=0)
                return (w_fit @ row) / w_fit.sum(), (w_val @ row) / jnp.maximum(w_val.sum(), 1.0)

            step = jax.value_and_grad(losses, has_aux=True)

            def body(c):
                epoch, params, state, best, since = c
                (_, val), g = step(params)
                with jax.numpy_dtype_promotion("standard"):
                    upd, state = opt.update(g, state, params)
                better = val < best
                return (epoch + 1, optax.apply_updates(params, upd), state,
                        jnp.where(better, val, best), jnp.where(better, 0, since + 1))  # fmt: skip

            def cond(c):
                return (c[0] < cap) & (c[4] < 20)

            return jax.lax.while_loop(
                cond, body, (0, init, opt.init(init), jnp.float32(jnp.inf), 0)
            )[0]

        return jax.vmap(one)(jnp.asarray(decays, jnp.float32))

    def run():
        epochs = []
        for width in widths:
            for f in range(n_folds):
                w_fit = jnp.asarray(fold != f, jnp.float32)
                epochs.append(train(w_fit, 1.0 - w_fit, width, 2000).block_until_ready())
        mean = int(np.mean([np.asarray(e).mean() for e in epochs]))
        train(jnp.ones(len(x)), jnp.zeros(len(x)), widths[0], max(mean - 20, 1)).block_until_ready()

    return run


def floor_stage_rows(path: str, instances: int, seed: int, commands: dict) -> list[dict]:
    """One row per (command, stage): ``cpu_s`` (the command's time in the stage), ``floor``,
    ``floor_cpu_s`` and ``ratio``; then one ``total`` row per command (``commands[name]`` its
    whole-process CPU): ``floor_cpu_s`` the sum of its stage floors, ``unfloored_s`` its stages
    with no floor written, ``ratio`` its CPU over the floors plus those stages, ``ratio_floored``
    (its CPU less those stages) over the floors."""
    import jax

    from oas import fit_ridge, group_split, read_paired

    timed = {name: _child_stages(name, path, instances, seed) for name in commands}
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    rows = [json.loads(line) for line in lines]
    data = read_paired(path)
    part = group_split(jax.random.split(jax.random.key(seed), 4)[0], data.group_id, (0.5, 0.2, 0.3))
    train, seen, test = data.take(part == 0), data.take(part != 2), data.take(part == 2)
    penalties = inspect.signature(fit_ridge).parameters["penalties"].default  # evaluate's grid
    mlp = mlp_floor_fn(jax.random.split(jax.random.key(seed), 4)[2], seen.features,
                       seen.outcomes, seen.group_id)  # fmt: skip
    mlp()  # compiled before it is timed
    slots = [test.budget == b for b in np.unique(test.budget)] + [np.ones(test.n, bool)]
    ev_obj = {}
    if "evaluate" in timed:  # the child's result object, and its (n_test, columns) interval table
        with open(path + ".evaluate.json", encoding="utf-8") as f:
            ev_obj = json.load(f)
    columns = int(timed.get("evaluate", {}).pop("interval columns", 80))
    values = np.random.default_rng(seed).random((test.n, columns))
    floors = {
        "start-up": ("numpy + JAX import, one array (fresh process)", startup_floor()),
        "start-up numpy": ("numpy import (fresh process)", startup_floor("import numpy")),
        "parse": ("json.loads of the lines", _best(lambda: [json.loads(s) for s in lines])),
        "write": ("json.dumps of the rows", _best(lambda: "".join(json.dumps(r) + "\n" for r in rows))),
        "ridge": ("closed-form solve per fold and penalty", _best(lambda: ridge_floor(
            train.features, train.outcomes, train.group_id, penalties))),
        "mlp": ("the grid as a bare jitted optax loop", _best(mlp)),
        "knn": ("chunked BLAS + argpartition, inner folds and final", _best(lambda: knn_floor(
            seen.features, seen.outcomes, seen.group_id, test.features))),
        "intervals": ("group means by reduceat + t interval per slot",
                      _best(lambda: interval_floor(values, test.group_id, slots))),
        "json": ("json.dumps of the result", _best(lambda: json.dumps(ev_obj))),
    }  # fmt: skip
    if "pair simulate" in timed:
        floors["draw"] = ("the draw kernel run warm", timed["pair simulate"].pop("draw, warm"))
    stage_floor = {
        "pair simulate": {"start-up": "start-up", "draw": "draw", "rows and writing": "write"},
        "read": {"start-up": "start-up numpy", "read": "parse"},
        "evaluate": {
            "start-up": "start-up",
            "read": "parse",
            "split": None,
            "ridge fit and calibration": "ridge",
            "MLP control": "mlp",
            "k-NN router": "knn",
            "theory router and the other policies": None,
            "intervals": "intervals",
            "token table and JSON": "json",
        },
        "identify": {"start-up": "start-up", "read": "parse", "fits and output": None},
    }
    out = []
    for name, whole in commands.items():
        t = dict(timed[name])
        t["start-up"] = t.pop("interpreter") + t.pop("imports")
        if name == "identify":
            t["fits and output"] = whole - t["start-up"] - t["read"]
        total_floor = unfloored = 0.0
        for stage, key in stage_floor[name].items():
            cpu = t[stage]
            what, floor = floors[key] if key else ("none written", None)
            if floor is None:
                unfloored += cpu
            else:
                total_floor += floor
            out.append({"command": name, "stage": stage, "cpu_s": cpu, "floor": what,
                        "floor_cpu_s": floor,
                        "ratio": cpu / floor if floor else None})  # fmt: skip
        out.append({"command": name, "stage": "total (whole process)", "cpu_s": whole,
                    "floor": f"sum of stage floors (+{unfloored:.2f} s unfloored)",
                    "floor_cpu_s": total_floor, "unfloored_s": unfloored,
                    "ratio": whole / (total_floor + unfloored),
                    "ratio_floored": (whole - unfloored) / total_floor})  # fmt: skip
    return out


def _main(argv: list[str]) -> None:
    command, path, instances, seed = argv[0], argv[1], int(argv[2]), int(argv[3])
    if command == "pair simulate":
        t = _stages_pair(path + ".stages.jsonl", instances, seed)
    elif command == "read":
        t = _stages_read(path)
    elif command == "evaluate":
        t = _stages_evaluate(path, seed)
    else:
        t = _stages_identify(path)
    print(json.dumps(t))


if __name__ == "__main__":
    _main(sys.argv[1:])
