"""``retcon paper-checks --paired FILE --export eee DIR``: the graded rows and the verdicts in
Every Eval Ever's format (``oas.eee_instances``, ``oas.eee_aggregate``; docs/import.md).

Under ``DIR``, in EEE's repository layout (``oas.eee_paths``):
``data/retcon-paired/unknown/READER/UUID_samples.jsonl`` holds the first ``--paired`` file's
rows, four instance records a row, and ``.../UUID.json`` the aggregate with one result per claim.
``retcon pair import .../UUID_samples.jsonl --from eee`` reads the rows back.
"""

from __future__ import annotations

import argparse

FORMATS = ("eee",)


def add_export_option(p: argparse.ArgumentParser) -> None:
    """Add ``--export FORMAT DIR`` to ``retcon paper-checks``."""
    p.add_argument(
        "--export",
        nargs=2,
        default=None,
        metavar=("FORMAT", "DIR"),
        help="with --paired: also write the graded rows and the verdicts in another format; "
        "eee: Every Eval Ever instance-level samples and aggregate, in its repository layout "
        "under DIR (data/retcon-paired/unknown/READER/UUID_samples.jsonl and UUID.json), read "
        "back by `retcon pair import --from eee` (docs/import.md)",
    )


def check_export(args: argparse.Namespace) -> None:
    """Refuse a malformed ``--export`` before any work (one line)."""
    if getattr(args, "export", None) is None:
        return
    from retcon.errors import InputError
    from retcon.output import check_out_dir

    fmt, folder = args.export
    if fmt not in FORMATS:
        raise InputError(f"--export: expected FORMAT in {list(FORMATS)}; got {fmt!r}.")
    if not args.paired:
        raise InputError(
            "--export eee DIR writes a --paired file's rows and verdicts; give --paired FILE."
        )
    check_out_dir("--export", folder, inputs=[("--paired", f) for f in args.paired])


def export(args: argparse.Namespace, ws, report: dict, reader: str) -> list[str]:
    """Write the samples and the aggregate of ``reader``'s file under ``DIR``; their paths."""
    import hashlib
    from pathlib import Path

    from oas import eee_aggregate, eee_instances, eee_jsonl, eee_paths
    from retcon import __version__
    from retcon.commands.common import write_set

    src = ws.paired_source(reader)
    evaluation_id = f"retcon-paper-checks/{reader}/{src.sha256[:12]}"
    records = eee_instances(
        src.data, model_id=reader, evaluation_id=evaluation_id, evaluation_name="retcon-paired"
    )
    text = eee_jsonl(records)
    aggregate_path, samples_path = eee_paths(evaluation_id, reader)
    aggregate = eee_aggregate(
        report,
        model_id=reader,
        evaluation_id=evaluation_id,
        dataset_name=str(src.path),
        dataset_sha256=src.sha256,
        instances_file=samples_path,
        instances_sha256=hashlib.sha256(text.encode()).hexdigest(),
        instances_rows=len(records),
        version=__version__,
    )
    folder = Path(args.export[1]) / Path(samples_path).parent
    names = {Path(samples_path).name: text, Path(aggregate_path).name: aggregate}
    write_set(folder, names, last=())
    return [str(Path(args.export[1]) / Path(samples_path).parent / n) for n in names]
