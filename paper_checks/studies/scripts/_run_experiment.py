"""The scripts of ``experiments/``: each is ``run_experiment(name, __doc__, argv)``, and this module
parses its arguments, computes and writes its outputs.

Figures (``paper_checks.studies.scripts._experiments.EXPERIMENTS``):
``python -m experiments.<name> --config experiments/<name>.toml --out DIR`` writes
``DIR/<name>.png`` and ``DIR/<name>.json`` (the figure's numbers under ``data`` plus the sidecar:
the exact config, seed, package and library versions). ``--from-sidecar DIR/<name>.json`` reruns
with the config and seed recorded there, so every figure is reproducible from its sidecar.

Analyses with their options on the command line (``SCRIPTS``): ``end_to_end``,
``end_to_end_sim`` and ``retriever_recall`` (``paper_checks.studies.scripts._end_to_end``),
``end_to_end_router`` (``paper_checks.studies.scripts._router``); each writes ``OUT/<name>.json``.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from retcon.errors import InputError

# keys an experiment config may hold, with their types (one table for all experiments)
KEYS = {
    "seed": int,
    "sources": list,
    "source": str,
    "queries": int,
    "instances": int,
    "locomo_limit": int,
    "data": str,
    "n_resamples": int,
    "readers": list,
    "theory_scales": list,
    "locomo_tertiles": bool,
    "scenario": str,
    "knob": str,
    "levels": list,
    "operator": str,
    "alpha": float,
    "alphas": list,
    "policies": list,
    "dpi": int,
    "memories": int,
    "memory_size": int,
}


def load_config(path) -> dict:
    """Read and check an experiment's TOML config (unknown key or wrong type: ``InputError``)."""
    path = Path(path)
    from retcon.errors import read_text

    try:
        config = tomllib.loads(read_text(path, "config file"))
    except InputError as e:
        raise InputError(f"--config: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML ({e}).") from None
    except RecursionError:  # as the scenario readers: one line, not a 3,000-line traceback
        raise InputError(
            f"{path}: TOML nested too deeply; an experiment's config is a flat table."
        ) from None
    return check_config(config, str(path))


def check_config(config: dict, where: str) -> dict:
    for k, v in config.items():
        if k not in KEYS:
            raise InputError(f"{where}: unknown key {k!r}; expected one of {sorted(KEYS)}.")
        want = KEYS[k]
        ok = (
            isinstance(v, (int, float)) and not isinstance(v, bool)
            if want is float
            else isinstance(v, want) and not (want is int and isinstance(v, bool))
        )
        if not ok:
            raise InputError(f"{where}: key {k!r} must be a {want.__name__}; got {v!r}.")
    return config


def parser(name: str, doc: str | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=f"python -m experiments.{name}", description=(doc or name).splitlines()[0]
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--config", metavar="FILE.toml", help=f"the experiment's config (experiments/{name}.toml)"
    )
    src.add_argument(
        "--from-sidecar", metavar="FILE.json", help="rerun with the config and seed of a sidecar"
    )
    p.add_argument(
        "--out", metavar="DIR", required=True, help="directory for the figure and its JSON sidecar"
    )
    from retcon.errors import seed_type

    p.add_argument(
        "--seed", type=seed_type, default=None, help="override the config's seed, in [0, 2**32)"
    )
    return p


def resolve(args) -> tuple[dict, int]:
    """The config and seed of this run, from ``--config`` or ``--from-sidecar``."""
    if args.from_sidecar:
        from retcon.errors import parse_json, read_text

        try:
            side = parse_json(read_text(args.from_sidecar, "sidecar file"), args.from_sidecar)
        except InputError as e:
            raise InputError(f"--from-sidecar: {e}") from None
        if "config" not in side or "seed" not in side:
            raise InputError(
                f"--from-sidecar: {args.from_sidecar} has no 'config' and 'seed'; is it a sidecar?"
            )
        config = check_config(dict(side["config"]), args.from_sidecar)
        seed = int(side["seed"])
    else:
        config = load_config(args.config)
        seed = int(config.get("seed", 0))
    if args.seed is not None:
        seed = args.seed
    config = {**config, "seed": seed}
    return config, seed


#: The scripts that take their options on the command line (not a TOML config).
SCRIPTS = ("end_to_end", "end_to_end_sim", "end_to_end_router", "retriever_recall")


def run_experiment(name: str, doc: str | None = None, argv=None) -> int:
    """Run the script ``python -m experiments.<name>`` on ``argv`` (``doc``: its ``--help``
    description): a figure computed by ``EXPERIMENTS[name]`` from its TOML config, written with
    its sidecar, or one of the analyses in ``SCRIPTS``. Returns the exit status.

    Raises:
      InputError: ``name`` is neither (the analyses also raise it on bad options).
    """
    if name == "end_to_end":
        from paper_checks.studies.scripts._end_to_end import main
    elif name == "end_to_end_sim":
        from paper_checks.studies.scripts._sweep import main
    elif name == "end_to_end_router":
        from paper_checks.studies.scripts._router import main
    elif name == "retriever_recall":
        from paper_checks.studies.scripts._recall import main
    else:
        return _run_figure(name, doc, argv)
    return main(doc, argv)


def _run_figure(name: str, doc: str | None, argv) -> int:
    """A figure of ``EXPERIMENTS``: parse, compute, write the figure and its sidecar."""
    from paper_checks.claims._sources import DataMissing, DependencyMissing
    from paper_checks.studies.scripts._experiments import EXPERIMENTS
    from retcon.output import (
        OutputSet,
        check_out_dir,
        sidecar,
        write_json_atomic,
    )
    from retcon.plots import save

    if name not in EXPERIMENTS:
        known = sorted(EXPERIMENTS) + list(SCRIPTS)
        raise InputError(f"run_experiment: unknown name {name!r}; expected one of {known}.")
    args = parser(name, doc).parse_args(argv)
    try:
        check_out_dir("--out", args.out, inputs=[("--config", args.config)])
        config, seed = resolve(args)
        make_data, make_figure = EXPERIMENTS[name]
        data = make_data(config, seed)
        fig = make_figure(data)
        with OutputSet(args.out, last=(f"{name}.json",)) as out:
            png = save(fig, out / f"{name}.png", dpi=int(config.get("dpi", 120)))
            side = sidecar(
                config,
                seed=seed,
                command=f"python -m experiments.{name}",
                figure=png.name,
                data=data,
            )
            write_json_atomic(out / f"{name}.json", side)
    except (InputError, DataMissing, DependencyMissing) as e:
        sys.stderr.write(f"experiments.{name}: error: {e}\n")
        return 2
    print(f"wrote {name}.png and {name}.json to {args.out}")
    return 0
