"""OAS gain over best-fixed as retrieval recall and type-classifier accuracy degrade (simulation).

Usage::

    python -m experiments.end_to_end_sim --out DIR [--preset locomo-like] [--instances 6000]
        [--seed 0] [--resamples 500]

Simulated paired data (``oas.simulate_paired``) are degraded by ``oas.real.degrade_paired``: a
question's evidence is missed with probability ``1 - recall`` (all outcomes 0) and its type one-hot
is replaced by a wrong type with probability ``1 - accuracy``. Writes ``DIR/end_to_end_sim.png``
(two panels) and ``DIR/end_to_end_sim.json`` (sidecar and the numbers).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.end_to_end_sim", description=__doc__)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--preset", default="locomo-like")
    p.add_argument("--instances", type=int, default=6000)
    p.add_argument(
        "--groups", type=int, default=10, help="questions are dealt into this many groups"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resamples", type=int, default=500)
    args = p.parse_args(argv)
    import jax
    import numpy as np

    from oas import simulate_paired
    from oas.real import degradation_sweep
    from retcon.output import check_out_dir, save_figure_atomic, sidecar, write_json_atomic

    out = check_out_dir("--out", args.out)
    out.mkdir(parents=True, exist_ok=True)
    key = jax.random.PRNGKey(args.seed)
    data = simulate_paired(jax.random.fold_in(key, 0), args.preset, args.instances)
    _, q = np.unique(np.asarray(data.query_id).astype(str), return_inverse=True)
    data = data._replace(group_id=np.asarray([f"g{i % args.groups}" for i in q], dtype=object))
    sweep = degradation_sweep(jax.random.fold_in(key, 1), data, n_resamples=args.resamples)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, (name, label) in zip(
        axes, (("recall", "retrieval recall"), ("type_accuracy", "type-classifier accuracy"))
    ):
        s = sweep[name]
        ax.plot(s["x"], s["gain"], "o-")
        ax.fill_between(s["x"], s["lower"], s["upper"], alpha=0.25)
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xlabel(label)
        ax.invert_xaxis()
    axes[0].set_ylabel("OAS - best-fixed (accuracy)")
    fig.suptitle(f"OAS gain under end-to-end degradation ({args.preset}, {data.n} rows)")
    fig.tight_layout()
    save_figure_atomic(fig, Path(out) / "end_to_end_sim.png", dpi=120)
    meta = sidecar(vars(args), seed=args.seed, command="python -m experiments.end_to_end_sim")
    meta["data"] = sweep
    write_json_atomic(Path(out) / "end_to_end_sim.json", meta)
    for name, s in sweep.items():
        for x, g, lo, hi in zip(s["x"], s["gain"], s["lower"], s["upper"]):
            sys.stdout.write(f"{name}={x:.2f}: gain {g:+.4f} [{lo:+.4f}, {hi:+.4f}]\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
