"""Hostile input, round three (issue 35 items 2, 3, 4, 7, 9): work sized up front, the newest
surfaces' small files, output targets checked before the work, same seed same bytes.

Contract (as ``tests/cli/test_hostile_input.py``): exit 2, exactly one line on stderr naming the option
or file, what was expected and what came; no traceback; nothing on stdout.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import numpy as np
import pytest

from retcon.errors import InputError
from tests._cli import error_lines
from tests._cli import run_cli as _run
from tests._data import LOCOMO_PATH, needs_locomo

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PRESET = Path(__file__).resolve().parents[2] / "sim" / "presets" / "locomo-stream.toml"


def _refused(argv, capsys, *words) -> str:
    """Run ``argv``; assert the contract and that the one line holds ``words``; return it."""
    rc, out, err = _run(argv, capsys)
    assert rc == 2, (rc, err)
    assert "Traceback" not in err
    lines = error_lines(err)
    assert len(lines) == 1, err
    assert out == ""
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def paired_file(tmp_path_factory):
    """A small valid paired file (12 groups) from the claims' simulated world."""
    import oas
    from tests.paper_checks.test_paper_checks_paired import _world

    path = tmp_path_factory.mktemp("sizes") / "paired.jsonl"
    oas.write_paired(path, _world(1))
    return path


def _stream_toml(tmp_path, **replace) -> Path:
    text = PRESET.read_text()
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "stream.toml"
    path.write_text(text)
    return path


# ---- item 2: timeline sizes its work; every sizing command has the guard -------------------------

BIG_BUDGETS = {
    "budgets = [256.0, 512.0, 1024.0, 2048.0, 4096.0]": (
        "budgets = {min = 64.0, max = 65536.0, count = 4096}"
    )
}


def test_timeline_refuses_4096_budgets_with_an_estimate(tmp_path, capsys, monkeypatch):
    """The auditor's scenario within the loader's limits (4,096 budgets, --queries 64): refused
    with the memory estimate (8 GiB limit, as a machine of 16 GiB), before any simulation."""
    monkeypatch.setenv("RETCON_MEMORY_LIMIT", str(8 * 2**30))
    path = _stream_toml(tmp_path, **BIG_BUDGETS)
    line = _refused(
        ["timeline", "--scenario", str(path), "--queries", "64"],
        capsys,
        "4096 budgets",
        "--queries 64",
        "needs about",
        "GiB of memory",
        "use at most",
    )
    assert str(path) in line


def test_timeline_refuses_20000_budgets_with_an_estimate(capsys, monkeypatch):
    monkeypatch.setenv("RETCON_MEMORY_LIMIT", str(8 * 2**30))
    budgets = [str(b) for b in range(1, 20001)]
    _refused(["timeline", "--budgets", *budgets], capsys, "--budgets (20000 values)", "needs about")


def test_timeline_scenario_queries_pass_the_cap_of_the_option(tmp_path, capsys):
    """``queries = 2147483647`` in the TOML meets the same cap as ``--queries``."""
    path = _stream_toml(tmp_path, **{"queries = 4096": "queries = 2147483647"})
    _refused(
        ["timeline", "--scenario", str(path)],
        capsys,
        str(path),
        "queries must be an integer in [2, 2**20]",
        "2147483647",
    )
    _refused(["timeline", "--queries", "2147483647"], capsys, "--queries", "2**20")


def test_timeline_refuses_sessions_past_the_size_guard(tmp_path, capsys, monkeypatch):
    """MODEL §10, issue 34: past the old 256 cap ``stream.sessions`` is sized, not capped: at a
    4 GiB limit 2048 sessions with the default 4096 queries are refused up front, naming the key,
    the value that came and the most that fits; that most fits and one more does not."""
    import sim
    from sim._stream import timeline_bytes

    monkeypatch.setenv("RETCON_MEMORY_LIMIT", str(4 * 2**30))
    path = _stream_toml(tmp_path, **{"sessions = 32": "sessions = 2048"})
    line = _refused(
        ["timeline", "--scenario", str(path)],
        capsys,
        str(path),
        "stream.sessions = 2048",
        "4096 queries",
        "needs about",
        "use at most",
        "sessions (stream.sessions)",
    )
    most = int(line.split("use at most ")[1].split()[0])
    assert 32 <= most < 2048, line
    ss = sim.load_stream(path)
    rows, g = 13, ss.stream.max_generation
    limit = 4 * 2**30
    assert (
        timeline_bytes(most, 5, 4096, rows, g) <= limit < timeline_bytes(most + 1, 5, 4096, rows, g)
    )
    # within the limit the same file at `most` sessions passes the guard
    sim.check_timeline_size(
        sim.load_stream(_stream_toml(tmp_path, **{"sessions = 32": f"sessions = {most}"})),
        None,
        None,
    )


def test_simulate_timeline_called_from_python_is_sized_first(tmp_path, monkeypatch):
    """MODEL §10, issue 34: ``sim.simulate_timeline`` runs the same size guard as the command
    before it allocates, naming its arguments as Python does: 2048 sessions at a 4 GiB limit are
    refused by ``stream.sessions``, and 10**5 budgets by ``budgets`` and ``queries=4096``."""
    import sim

    monkeypatch.setenv("RETCON_MEMORY_LIMIT", str(4 * 2**30))
    big = sim.load_stream(_stream_toml(tmp_path, **{"sessions = 32": "sessions = 2048"}))
    with pytest.raises(InputError, match=r"stream\.sessions = 2048 .*use at most \d+ sessions"):
        sim.simulate_timeline(big)
    small = sim.load_stream(_stream_toml(tmp_path))
    many = np.geomspace(8, 4096, 100_000)
    with pytest.raises(InputError, match=r"^budgets \(100000 values\) with queries=4096 needs"):
        sim.simulate_timeline(small, budgets=many, queries=4096)


def test_stream_sessions_past_256_accepted_and_a_hostile_count_refused(tmp_path, monkeypatch):
    """MODEL §10: ``StreamConfig`` takes T = 300 (past the old cap); the absolute ceiling (4096)
    still refuses a hostile ``sessions = 10**9`` by its key, before any estimate."""
    import sim

    monkeypatch.setenv("RETCON_MEMORY_LIMIT", str(8 * 2**30))
    ss = sim.load_stream(_stream_toml(tmp_path, **{"sessions = 32": "sessions = 300"}))
    assert ss.stream.sessions == 300
    sim.check_timeline_size(ss, None, 256)  # about 0.5 GiB: within any limit here
    for bad in ("sessions = 4097", "sessions = 1000000000"):
        with pytest.raises(InputError, match=r"stream\.sessions") as e:
            sim.load_stream(_stream_toml(tmp_path, **{"sessions = 32": bad}))
        assert bad.split()[-1] in str(e.value) and "4096" in str(e.value)


def test_skip_packing_is_sized_quadratically_in_sessions():
    """``skip`` packing runs the dense kernel, (budgets, T, T) per stream: doubling T more than
    doubles its estimate, and it passes the linear kernel's at the same sizes."""
    from sim._stream import timeline_bytes

    lin = [timeline_bytes(t, 5, 256, 13, 8) for t in (256, 512)]
    dense = [timeline_bytes(t, 5, 256, 13, 8, packing="skip") for t in (256, 512)]
    assert dense[0] > lin[0] and dense[1] / dense[0] > 3.5 > lin[1] / lin[0]
    # measured peak RSS of 256 skip streams at 128 sessions: 2.48 GB; the estimate covers it
    assert timeline_bytes(128, 5, 256, 13, 8, packing="skip") >= 2.48e9


def test_the_timeline_refusal_comes_before_jax_is_imported(tmp_path):
    """The refusal is up front: it needs the scenario and the estimate, not JAX (whose import
    alone takes seconds), so it answers at once."""
    import subprocess
    import sys

    path = _stream_toml(tmp_path, **BIG_BUDGETS)
    code = (
        "import sys\n"
        "from retcon.cli import main\n"
        f"rc = main(['timeline', '--scenario', {str(path)!r}, '--queries', '64'])\n"
        "assert rc == 2, rc\n"
        "assert 'jax' not in sys.modules, 'jax was imported before the refusal'\n"
    )
    env = dict(os.environ, RETCON_MEMORY_LIMIT=str(8 * 2**30))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, check=False)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert b"needs about" in r.stderr


def test_the_timeline_estimate_grows_with_every_sized_argument():
    from sim._stream import TIMELINE_CHUNK, timeline_bytes
    from sim._timeline import CHUNK

    assert TIMELINE_CHUNK == CHUNK  # the estimate sizes the chunk sim really compiles

    base = timeline_bytes(32, 5, 4096, 13, 8)
    assert timeline_bytes(32, 10, 4096, 13, 8) > base
    assert timeline_bytes(32, 5, 8192, 13, 8) > base
    assert timeline_bytes(64, 5, 4096, 13, 8) > base
    # the measured peak of 256 budgets x 32 sessions was about 1.2 GB: the estimate covers it
    assert timeline_bytes(32, 256, 2, 13, 8) >= 1.0e9


def _sizing_commands(paired: Path, out: Path) -> dict[str, list[str]]:
    """Every command that allocates in proportion to its arguments, with a size far past any
    machine: each must refuse it up front with ``check_memory``'s estimate."""
    return {
        "simulate": ["simulate", "--resamples", "100000000"],
        "pair simulate": [
            "pair",
            "simulate",
            "--instances",
            "1000000000",
            "--output",
            str(out / "p.jsonl"),
        ],
        "evaluate": ["evaluate", "--data", str(paired), "--resamples", "1000000000"],
        "identify": ["identify", "--data", str(paired), "--resamples", "1000000000"],
        "timeline simulate": ["timeline", "--budgets", *[str(b) for b in range(1, 5001)]],
        "bench": ["bench", "--sizes", "2000000000"],
        "stress": ["stress", "--memory-size", "64", "--config", str(_many_budgets(out))],
    }


def _many_budgets(folder: Path) -> Path:
    """The default simulate scenario with 4,096 budgets (as the auditor's timeline scenario)."""
    text = (PRESET.parent / "locomo-like.toml").read_text()
    start = text.index("budgets =")
    end = text.index("\n", start)
    path = folder / "many-budgets.toml"
    path.write_text(
        text[:start] + "budgets = {min = 64.0, max = 65536.0, count = 4096}" + text[end:]
    )
    return path


#: The commands that size nothing, and why their memory does not grow past what they check.
NOT_SIZED = {
    "crossover": "theory's closed forms over --budgets (a list the user types) and one law",
    "fit": "one ridge fit per fold over the paired file (folds capped); memory ~ the file",
    "predict": "one pass of a fitted router over the file; memory ~ the file",
    "pair locomo": "one row per question, budget and operator of a file bounded by its reader",
    "pair longmemeval": "as pair locomo",
    "data fetch": "downloads one known file",
    "data path": "prints a path",
    "timeline locomo": "--budgets capped at 64 values (test_timeline_on_data_caps_its_budgets)",
    "timeline identify": "as timeline locomo",
    "paper-checks": "its sizes come from CheckConfig (fast or --full), not from free numbers",
    "advise": "--resamples capped at 10,000 bootstraps of the --lengths file; memory ~ the file",
    "pair import": "one pass over the log; memory ~ the file",
    "fidelity": "LoCoMo's conversations (--limit only lowers them); memory ~ the file",
    "llm check": "at most 14 requests (5 probes, doubling prompts to --max-context, capped at 262,144 tokens)",
}


def _commands() -> list[str]:
    """Every command and subcommand of ``retcon``, read from its parser."""
    import argparse

    from retcon.cli import build_parser

    def walk(p, prefix=()):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    yield from walk(sub, (*prefix, name))
                return
        yield " ".join(prefix)

    return list(walk(build_parser()))


@pytest.mark.parametrize(
    "command",
    ["simulate", "pair simulate", "evaluate", "identify", "timeline simulate", "bench", "stress"],
)
def test_every_sizing_command_has_the_guard(command, paired_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RETCON_MEMORY_LIMIT", str(2**30))
    argv = _sizing_commands(paired_file, tmp_path)[command]
    _refused(argv, capsys, "needs about", "of memory; the limit here is 1 GiB")
    assert not (tmp_path / "p.jsonl").exists()


def test_the_enumeration_lists_every_command_that_sizes_its_work(tmp_path):
    """Every command the parser knows is either in the table of sized commands (each refused
    above) or in ``NOT_SIZED`` with the reason; a new command must be put in one of them."""
    commands = _commands()
    sized = set(_sizing_commands(Path("x"), tmp_path))
    assert {"simulate", "stress", "timeline simulate", "pair locomo"} <= set(commands)
    assert sized <= set(commands), sized - set(commands)
    assert not sized & set(NOT_SIZED)
    assert set(commands) == sized | set(NOT_SIZED), set(commands) ^ (sized | set(NOT_SIZED))


@pytest.mark.parametrize("form", ["locomo", "identify"])
def test_timeline_on_data_caps_its_budgets(form, capsys):
    """Issue 35 item 2: ``timeline locomo --budgets 1 .. 20000`` ran for minutes unrefused (a
    3-conversation file, 330 MB and growing); the budgets are now capped before any reading."""
    data = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_tiny.json"
    argv = ["timeline", form, "--data", str(data), "--budgets", *map(str, range(1, 20001))]
    _refused(argv, capsys, "--budgets takes at most 64 budgets", "got 20000")


def test_timeline_locomo_on_one_conversation_names_the_need(capsys):
    """Issue 35 item 3: a one-conversation file gave ``wild_cluster_replicates: group_values must
    have shape (G >= 2, ...)`` (an internal function) even with ``--resamples 0``."""
    data = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_tiny.json"
    argv = ["timeline", "locomo", "--data", str(data), "--resamples", "0"]
    line = _refused(argv, capsys, "needs at least 2 conversations", "got 1")
    assert "wild_cluster" not in line


def test_stress_refuses_a_billion_memories_up_front(capsys):
    """``stress --memories 1000000000`` (13,984 hours in the audit): refused with the estimate of
    its work and how many memories fit, before JAX is imported."""
    line = _refused(
        ["stress", "--memories", "1000000000"],
        capsys,
        "--memories 1000000000",
        "needs about",
        "record placements of work",
        "the limit here is",
        "use at most",
    )
    most = int(line.split("use at most ")[1].split()[0])
    assert 100_000 < most < 1_000_000_000


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--memories", "0"], "--memories must be an integer in [1, 2**31); got 0."),
        (["--memories", "2147483648"], "--memories must be an integer in [1, 2**31)"),
        (["--memory-size", "65"], "--memory-size must be an integer in [1, 64]; got 65."),
    ],
)
def test_stress_sizes_are_checked_before_the_work(argv, needle, capsys):
    _refused(["stress", *argv], capsys, needle)


def test_stress_scenario_budgets_meet_the_memory_estimate(tmp_path, capsys, monkeypatch):
    """The scenario TOML's budgets pass the same estimate as a size typed on the command line:
    4,096 budgets at --memory-size 64 (about 5.3 GiB) are refused under a 4 GiB limit naming
    the file; the defaults (29 budgets) fit."""
    monkeypatch.setenv("RETCON_MEMORY_LIMIT", str(4 * 2**30))
    path = _many_budgets(tmp_path)
    _refused(
        ["stress", "--memory-size", "64", "--config", str(path)],
        capsys,
        "4096 budgets of --config",
        str(path),
        "needs about",
        "GiB of memory",
    )
    from argparse import Namespace

    from retcon.commands.sim import check_stress_size
    from sim import load_scenario

    args = Namespace(
        memories=512,
        memory_size=64,
        budget_spillover=[0, 0.1],
        rank_spillover=[0, 0.1],
        config=None,
        scenario=None,
    )
    check_stress_size(args, load_scenario("locomo-like"))  # the defaults' size fits


# ---- item 3: timeline locomo on small or unusual files -------------------------------------------


def _tiny(n: int) -> list[dict]:
    d = json.loads((FIX / "locomo_tiny.json").read_text())
    out = []
    for i in range(n):
        for c in d:
            c = copy.deepcopy(c)
            c["sample_id"] = f"{c['sample_id']}-{i}"
            out.append(c)
    return out


def _write(tmp_path, name, obj) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return str(p)


@pytest.mark.parametrize("identify", [False, True])
def test_timeline_locomo_refuses_an_empty_list(identify, tmp_path, capsys):
    f = _write(tmp_path, "empty.json", [])
    argv = ["timeline", "identify" if identify else "locomo", "--data", f]
    _refused(argv, capsys, "--data", "empty.json", "got 0")


def test_timeline_locomo_refuses_a_conversation_without_sessions(tmp_path, capsys):
    conv = _tiny(1)[0]
    conv["conversation"] = {
        k: v for k, v in conv["conversation"].items() if not k.startswith("session_")
    }
    conv["qa"] = []
    f = _write(tmp_path, "nosess.json", [conv])
    _refused(["timeline", "locomo", "--data", f], capsys, "nosess.json", "no sessions")


def test_timeline_locomo_refuses_empty_qa_before_the_work(tmp_path, capsys):
    convs = _tiny(2)
    for c in convs:
        c["qa"] = []
    f = _write(tmp_path, "noqa.json", convs)
    _refused(["timeline", "locomo", "--data", f], capsys, "noqa.json", "no questions")


def test_identify_refuses_a_conversation_without_questions(tmp_path, capsys):
    convs = _tiny(3)
    convs[1]["qa"] = []
    f = _write(tmp_path, "oneqa.json", convs)
    _refused(
        ["timeline", "identify", "--data", f],
        capsys,
        "oneqa.json",
        f"conversation {convs[1]['sample_id']!r} has no questions",
    )


def test_identify_needs_three_conversations_up_front(tmp_path, capsys):
    f = _write(tmp_path, "two.json", _tiny(2))
    _refused(["timeline", "identify", "--data", f], capsys, "at least 3", "got 2")


@pytest.mark.slow
def test_timeline_locomo_policy_router_alone_runs(tmp_path, capsys):
    """``--policy router`` alone: the baseline and periodic run too (as in simulation)."""
    f = _write(tmp_path, "three.json", _tiny(3))
    rc, out, err = _run(
        ["timeline", "locomo", "--data", f, "--policy", "router", "--resamples", "0", "--json"],
        capsys,
    )
    assert rc == 0, err
    rep = json.loads(out)
    assert {"retain-all", "periodic"} <= {u["policy"] for u in rep["utility"]}
    assert rep["router"]["gains"]


# ---- item 4: paper-checks --paired with too few groups -------------------------------------------


def _paired_subset(tmp_path, name, fn) -> str:
    import oas
    from tests.paper_checks.test_paper_checks_paired import _world

    data = fn(_world(1))
    path = tmp_path / name
    oas.write_paired(path, data)
    return str(path)


def test_paired_one_row(tmp_path, capsys):
    f = _paired_subset(tmp_path, "one_row.jsonl", lambda d: d.take(np.arange(1)))
    line = _refused(
        ["paper-checks", "--paired", f, "--no-figures"], capsys, "--paired", f, "at least 2 groups"
    )
    assert "wild_cluster" not in line


def test_paired_one_group(tmp_path, capsys):
    def one_group(d):
        g = d.group_id.astype(str)
        return d.take(np.flatnonzero(g == g[0]))

    f = _paired_subset(tmp_path, "one_group.jsonl", one_group)
    _refused(["paper-checks", "--paired", f, "--no-figures"], capsys, f, "holds 1 group")


def test_paired_3000_groups_of_one_row(tmp_path, capsys):
    def singletons(d):
        big = d.take(np.resize(np.arange(d.n), 3000))
        ids = np.array([f"g{i}" for i in range(3000)], dtype=object)
        return big._replace(group_id=ids, instance_id=ids.copy())

    f = _paired_subset(tmp_path, "singletons.jsonl", singletons)
    _refused(
        ["paper-checks", "--paired", f, "--no-figures"], capsys, f, "3000 groups", "single row"
    )


def test_raw_accuracy_check_without_a_shared_budget_has_no_drop():
    """No group saw two budgets: the drop is missing, not an All-NaN error."""
    import oas
    from paper_checks._curves import raw_accuracy_check
    from tests.paper_checks.test_paper_checks_paired import _world

    d = _world(1)
    d = d.take(np.resize(np.arange(d.n), 200))
    ids = np.array([f"g{i}" for i in range(200)], dtype=object)
    d = d._replace(group_id=ids, instance_id=ids.copy())
    assert isinstance(d, oas.PairedData)
    r = raw_accuracy_check(d)
    assert r["at"] is None


# ---- item 7: output targets checked before the work ----------------------------------------------

needs_sys = pytest.mark.skipif(
    not (os.path.isdir("/sys") and os.geteuid() == 0),
    reason="needs root and /sys (a folder os.access calls writable that refuses files)",
)


@needs_sys
def test_check_out_dir_probes_the_folder():
    from retcon.output import check_out_dir, check_out_file

    with pytest.raises(InputError, match="cannot write in '/sys'"):
        check_out_dir("--out", "/sys/retcon-out")
    with pytest.raises(InputError, match="cannot write"):
        check_out_dir("--out", "/sys/kernel")
    with pytest.raises(InputError, match="cannot write in '/sys'"):
        check_out_file("--output", "/sys/x.jsonl")


def test_check_out_dir_leaves_nothing_in_a_writable_folder(tmp_path):
    from retcon.output import check_out_dir

    check_out_dir("--out", tmp_path / "new")
    check_out_dir("--out", tmp_path)
    assert list(tmp_path.iterdir()) == []


@needs_sys
@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--out", "/sys/retcon-bench"],
        ["bench", "--only", "sim", "--out", "/sys/retcon-bench"],
        ["paper-checks", "--out", "/sys/kernel/retcon"],
        ["evaluate", "--data", "{paired}", "--out", "/sys/retcon-eval"],
        ["identify", "--data", "{paired}", "--out", "/sys/retcon-id"],
        ["timeline", "--out", "/sys/retcon-tl"],
        ["simulate", "--out", "/sys/retcon-sim"],
        ["pair", "simulate", "--instances", "4", "--output", "/sys/retcon.jsonl"],
    ],
)
def test_unwritable_outputs_are_refused_before_the_work(argv, paired_file, capsys):
    argv = [str(paired_file) if a == "{paired}" else a for a in argv]
    _refused(argv, capsys, "cannot write in", "/sys")


# ---- item 9: same seed, same bytes ----------------------------------------------------------------


def _twice(argv, capsys) -> tuple[str, str]:
    outs = []
    for _ in range(2):
        rc, out, err = _run(argv, capsys)
        assert rc == 0, err
        outs.append(out)
    return outs[0], outs[1]


@pytest.mark.slow
def test_timeline_identify_json_is_the_same_bytes_twice(tmp_path, capsys):
    f = _write(tmp_path, "three.json", _tiny(3))
    a, b = _in_processes(["timeline", "identify", "--data", f, "--json"])
    assert a == b
    assert json.loads(a)["conversations"] == 3


@pytest.mark.slow
def test_paper_checks_paired_is_the_same_bytes_twice(paired_file, capsys):
    a, b = _twice(
        ["paper-checks", "--paired", str(paired_file), "--claims", "1", "--json", "--no-figures"],
        capsys,
    )
    assert a == b


@pytest.mark.slow
def test_identify_is_the_same_bytes_twice(tmp_path, capsys):
    data = tmp_path / "sim.jsonl"
    rc, _, err = _run(["pair", "simulate", "--instances", "1200", "--output", str(data)], capsys)
    assert rc == 0, err
    a, b = _twice(
        [
            "identify",
            "--data",
            str(data),
            "--resamples",
            "20",
            "--folds",
            "2",
            "--strata",
            "2",
            "--no-diagnostics",
            "--json",
        ],
        capsys,
    )
    assert a == b


def _in_processes(argv) -> list[bytes]:
    """stdout of ``retcon argv`` in two fresh processes with different string hashes: ``set``
    and ``dict`` orders of strings differ between them, as between two runs of a user."""
    import subprocess
    import sys

    outs = []
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        r = subprocess.run(
            [sys.executable, "-m", "retcon", *argv], capture_output=True, env=env, check=False
        )
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        outs.append(r.stdout)
    return outs


@pytest.mark.slow
def test_extractive_scores_do_not_depend_on_string_hashes():
    """Issue 35 item 9: the extractive operator summed idf weights over a ``set``; the sum's last
    bits, and so ties between sentences, changed with the process's string hashes. On LoCoMo's
    sessions the merged and abstracted texts are now the same under any hash seed."""
    if not LOCOMO_PATH.is_file():
        pytest.skip("LoCoMo not found")
    code = (
        "import hashlib,sys\n"
        "from oas.real import load_locomo\n"
        "from oas.real._operators import ExtractiveOperators\n"
        "op = ExtractiveOperators(); h = hashlib.sha256()\n"
        "for c in load_locomo(sys.argv[1]).conversations:\n"
        "    for s in c.sessions:\n"
        "        for r in op.merge(list(s.records), c) + op.abstract(list(s.records), c):\n"
        "            h.update(r.text.encode())\n"
        "print(h.hexdigest())\n"
    )
    import subprocess
    import sys

    digests = set()
    for hash_seed in ("0", "1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        r = subprocess.run(
            [sys.executable, "-c", code, str(LOCOMO_PATH)],
            capture_output=True,
            env=env,
            check=True,
        )
        digests.add(r.stdout)
    assert len(digests) == 1


@pytest.mark.slow
@needs_locomo
def test_timeline_identify_on_locomo_is_the_same_bytes_twice():
    a, b = _in_processes(["timeline", "identify", "--data", str(LOCOMO_PATH), "--json"])
    assert a == b


@pytest.mark.slow
def test_fit_is_the_same_bytes_twice(paired_file, tmp_path, capsys):
    files = []
    router = tmp_path / "router.json"  # one path: the report names it
    for _ in range(2):
        rc, out, err = _run(
            ["fit", "--data", str(paired_file), "--router-out", str(router), "--json"], capsys
        )
        assert rc == 0, err
        files.append((router.read_bytes(), out))
    assert files[0] == files[1]


@pytest.mark.slow
def test_pair_end_to_end_is_the_same_bytes_twice(tmp_path, capsys):
    data = _write(tmp_path, "three.json", _tiny(3))
    written = []
    for i in range(2):
        out = tmp_path / f"pairs{i}.jsonl"
        rc, _, err = _run(
            [
                "pair",
                "locomo",
                "--data",
                data,
                "--protocol",
                "end-to-end",
                "--output",
                str(out),
                "--no-progress",
            ],
            capsys,
        )
        assert rc == 0, err
        written.append(out.read_bytes())
    assert written[0] == written[1]
    assert written[0]


# ---- item 11: paper-checks --paired --full is honoured, not ignored ------------------------------


def test_paper_checks_paired_honours_full(paired_file):
    """``--paired FILE --full`` grades the file at paper scale (2000 resamples, ``full`` recorded
    in the report's mode line); without ``--full`` the fast 500."""
    from paper_checks import CheckConfig
    from retcon.cli import build_parser
    from retcon.commands.paper_checks import run_config

    parser = build_parser()
    fast = run_config(parser.parse_args(["paper-checks", "--paired", str(paired_file)]))
    full = run_config(parser.parse_args(["paper-checks", "--paired", str(paired_file), "--full"]))
    assert (fast.full, fast.n_resamples) == (False, CheckConfig.fast().n_resamples)
    assert (full.full, full.n_resamples) == (True, CheckConfig.full_scale().n_resamples)
    assert full.n_resamples > fast.n_resamples
    assert full.paired == fast.paired == (str(paired_file),)
