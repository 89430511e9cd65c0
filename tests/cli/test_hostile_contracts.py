"""Every command keeps its contract on the cases of issue 48's audit (items 2-5): exit 2 and
exactly one stderr line naming the option, file, row or field, with what was expected.

The announcement of what a command will do (``retcon.commands._progress.announce``) is shown
here at once (``GRACE_S = 0``), so a check made after it shows as a second line: each case below
must be refused before the announcement, not merely have it dropped by ``retcon.cli.main``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retcon.commands import _progress
from tests._cli import run_cli

FIX = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(autouse=True)
def _announce_at_once(monkeypatch, tmp_path):
    monkeypatch.setattr(_progress, "GRACE_S", 0.0)
    monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def one_line(argv, capsys, *words) -> str:
    """Run ``retcon argv``: status 2, nothing on stdout, exactly one stderr line holding
    ``words``; returns the line."""
    rc, out, err = run_cli([str(a) for a in argv], capsys)
    lines = err.strip().splitlines()
    assert rc == 2 and out == "" and len(lines) == 1, (rc, err)
    assert ": error: " in lines[0] and "Traceback" not in err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def _locomo(tmp_path, name: str, edit=None, n: int = 2) -> Path:
    """A LoCoMo file of ``n`` conversations (copies of the tiny fixture's one), ``edit``ed."""
    conv = json.loads((FIX / "locomo_tiny.json").read_text())[0]
    convs = []
    for i in range(n):
        c = json.loads(json.dumps(conv))
        c["sample_id"] = f"conv-{i}"
        convs.append(c)
    if edit is not None:
        edit(convs)
    p = tmp_path / name
    p.write_text(json.dumps(convs))
    return p


def _no_qa(convs):
    convs[1]["qa"] = []


def _no_sessions(convs):
    convs[1]["conversation"] = {
        k: v for k, v in convs[1]["conversation"].items() if not k.startswith("session")
    }


@pytest.fixture
def simulated() -> Path:
    """A ``pair simulate`` file (``retcon pair simulate --instances 8 --budgets 64,256 --groups
    2``): design ``ours``, 2 groups of 2 questions, with the evidence structure."""
    return FIX / "paired_simulated_small.jsonl"


# ---- item 4: the listed cases are checked before the announcement ----------------------------


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--budgets", "64,64"], ("--budgets", "strictly increasing", "'64,64'")),
        (["--budgets", "512,64"], ("--budgets", "strictly increasing", "'512,64'")),
        (["--instances", "200", "--groups", "200"], ("--groups 200", "only 7 questions")),
    ],
)
def test_pair_simulate_checks_budgets_and_groups_up_front(tmp_path, capsys, extra, words):
    argv = ["pair", "simulate", "--output", tmp_path / "p.jsonl", *extra]
    if "--instances" not in extra:
        argv += ["--instances", "50"]
    one_line(argv, capsys, *words)
    assert not (tmp_path / "p.jsonl").exists()


def test_identify_refuses_one_row_or_one_group_up_front(tmp_path, capsys, simulated):
    rows = simulated.read_text().splitlines()
    one = tmp_path / "one_row.jsonl"
    one.write_text(rows[0] + "\n")
    one_line(["identify", "--data", one], capsys, "--data", "1 row in 1 group", "at least 2")
    g0 = json.loads(rows[0])["group_id"]
    group = tmp_path / "one_group.jsonl"
    group.write_text("".join(r + "\n" for r in rows if json.loads(r)["group_id"] == g0))
    one_line(["identify", "--data", group], capsys, "--data", "in 1 group", "at least 2 groups")


def test_pair_locomo_refuses_an_empty_list_up_front(tmp_path, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    argv = ["pair", "locomo", "--data", empty, "--output", tmp_path / "o.jsonl"]
    one_line(argv, capsys, "--data", "needs a conversation; got 0")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\x00\x01\xff\xfe" * 64, ("--data", "not UTF-8")),
        (b'{"conversation": {}}', ("--data", "expected a JSON list; got dict")),
    ],
)
def test_paper_checks_refuses_a_binary_or_dict_data_file_up_front(tmp_path, capsys, content, words):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    argv = ["paper-checks", "--design", "paper", "--tables-only", "--data", bad]
    one_line(argv, capsys, *words)


@pytest.mark.parametrize("kind", ["ours", "binary", "empty"])
def test_second_reader_is_read_before_the_locomo_pairing(tmp_path, capsys, simulated, kind):
    data = _locomo(tmp_path, "two.json")
    second = {"ours": simulated, "binary": tmp_path / "b.jsonl", "empty": tmp_path / "e.jsonl"}[
        kind
    ]
    if kind == "binary":
        second.write_bytes(b"\x00\xff\xfe\x01" * 64)
    elif kind == "empty":
        second.write_text("")
    argv = ["paper-checks", "--design", "paper", "--tables-only", "--data", data]
    line = one_line([*argv, "--second-reader", second], capsys, "--second-reader", str(second))
    if kind == "ours":
        assert "design ours" in line


# ---- item 2: the main paired file's design ---------------------------------------------------


def test_design_paper_refuses_a_main_paired_file_of_another_design(capsys, simulated):
    """Before: exit 0 with the paper's LoCoMo tables filled from a simulated file of design ours."""
    argv = ["paper-checks", "--design", "paper", "--tables-only", "--paired", simulated]
    one_line(argv, capsys, f"--paired {simulated}", "design ours", "--design paper")


# ---- item 3: odd LoCoMo files, everywhere LoCoMo is read ------------------------------------


@pytest.mark.parametrize(
    ("n", "edit", "words"),
    [
        (1, None, ("needs at least 2 conversations", "got 1")),
        (2, _no_sessions, ("'conv-1' has no sessions",)),
        (2, _no_qa, ("'conv-1' has no questions",)),
    ],
)
def test_paper_checks_refuses_odd_locomo_files_up_front(tmp_path, capsys, n, edit, words):
    """Before: ``n_folds must be at most the number of groups (1); got 2.`` after the pairing."""
    data = _locomo(tmp_path, "odd.json", edit, n=n)
    argv = ["paper-checks", "--design", "paper", "--tables-only", "--data", data]
    one_line(argv, capsys, "--data", *words)


def test_timeline_locomo_refuses_a_conversation_without_questions(tmp_path, capsys):
    """Before: a 23-line traceback (``_survival_table`` formatting ``None``)."""
    data = _locomo(tmp_path, "noqa.json", _no_qa)
    argv = ["timeline", "locomo", "--resamples", "20", "--passes", "2", "--data", data]
    one_line(argv, capsys, "retcon timeline locomo: error: --data", "'conv-1' has no questions")


def test_timeline_locomo_router_names_data_and_the_count(tmp_path, capsys):
    """Before: the line named ``timeline_router_report`` and the command as ``retcon timeline``."""
    data = _locomo(tmp_path, "two.json")
    line = one_line(
        ["timeline", "locomo", "--data", data, "--policy", "router"],
        capsys,
        "retcon timeline locomo: error: --data",
        "--policy router needs at least 3 conversations",
        "got 2",
    )
    assert "timeline_router_report" not in line


# ---- item 5: the option, not an internal setting ---------------------------------------------

_LLM = ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"]


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--llm-timeout", "0"], "--llm-timeout"),
        (["--llm-timeout", "-1"], "--llm-timeout"),
        (["--llm-timeout", "nan"], "--llm-timeout"),
        (["--concurrency", "0"], "--concurrency"),
        (["--llm-max-response-bytes", "0"], "--llm-max-response-bytes"),
    ],
)
def test_timeline_locomo_llm_errors_name_the_option(tmp_path, capsys, extra, option):
    data = _locomo(tmp_path, "two.json")
    line = one_line(["timeline", "locomo", "--data", data, *_LLM, *extra], capsys, option)
    assert "LLM " not in line


@pytest.mark.parametrize("url", ["not-a-url", "ftp://example.org/v1"])
def test_a_bad_base_url_names_the_option(tmp_path, capsys, url):
    data = _locomo(tmp_path, "two.json")
    argv = ["timeline", "locomo", "--data", data, "--llm-base-url", url, "--llm-model", "m"]
    line = one_line(argv, capsys, "--llm-base-url must be an http:// or https:// address")
    assert "LLM base URL" not in line


def test_pair_locomo_checks_the_response_cap_before_the_work(tmp_path, capsys):
    data = _locomo(tmp_path, "two.json")
    argv = ["pair", "locomo", "--data", data, "--output", tmp_path / "o.jsonl", "--operators"]
    argv += ["llm", *_LLM, "--llm-max-response-bytes", "0"]
    one_line(argv, capsys, "--llm-max-response-bytes must be an integer in [1, ")


def test_an_empty_audit_mode_or_audit_file_is_refused(tmp_path, capsys):
    """Before: ``--audit-mode ''`` ran as the default and an audit of ``[]`` audited nothing."""
    audit = tmp_path / "errors.json"
    audit.write_text("[]")
    data = _locomo(tmp_path, "two.json")
    base = ["pair", "locomo", "--data", data, "--output", tmp_path / "o.jsonl"]
    one_line([*base, "--locomo-audit", audit], capsys, "--locomo-audit errors.json: no entries")
    one_line([*base, "--locomo-audit", audit, "--audit-mode", ""], capsys, "--audit-mode", "''")


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("single-hop = 0.95", "single-hop = 1e308", "operators.merge.fidelity.single-hop"),
        ("scale = 28.0", "scale = 1e308", "types.single-hop.length.scale"),
        ("max = 1024.0", "max = 1e300", "budgets.max"),
    ],
)
def test_scenario_values_beyond_float32_are_refused_at_load(tmp_path, capsys, old, new, field):
    """Before: raw numpy overflow warnings from the float32 kernel (and meaningless numbers)."""
    rc, toml, _ = run_cli(["simulate", "--print-scenario", "locomo-like"], capsys)
    assert rc == 0 and old in toml
    path = tmp_path / "s.toml"
    path.write_text(toml.replace(old, new, 1))
    line = one_line(["simulate", "--config", path, "--queries", "2048"], capsys, field)
    assert "1e+30" in line and "float32" in line


# ---- item 4: a static guard --------------------------------------------------------------------

COMMANDS_DIR = Path(__file__).resolve().parents[2] / "retcon" / "commands"


def checks_after_announce(source: str) -> list[str]:
    """``function:line: what`` for each input check that a command function makes after its
    first ``announce(`` call: a ``raise InputError`` or a call of a ``check_*`` / ``_check*``
    helper. Those belong before the announcement (a refusal is one line); a check only the work
    can make (a write, a library rule met mid-run) lives in the called functions, not here."""
    import ast

    found = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
        name = lambda c: getattr(c.func, "attr", getattr(c.func, "id", "")) or ""  # noqa: E731
        first = min((c.lineno for c in calls if name(c) == "announce"), default=None)
        if first is None:
            continue
        for n in ast.walk(fn):
            if getattr(n, "lineno", 0) <= first:
                continue
            if (
                isinstance(n, ast.Raise)
                and n.exc is not None
                and "InputError" in ast.unparse(n.exc)
            ):
                found.append(f"{fn.name}:{n.lineno}: raise InputError")
            elif isinstance(n, ast.Call) and name(n).startswith(("check_", "_check")):
                found.append(f"{fn.name}:{n.lineno}: {name(n)}()")
    return found


def test_no_command_checks_its_input_after_announcing():
    """Issue 48 item 4: no ``announce(`` before the command's last input check, in every
    command module (the listed cases moved their checks up; this keeps new ones from slipping)."""
    found = [
        f"{p.name}:{hit}"
        for p in sorted(COMMANDS_DIR.glob("*.py"))
        for hit in checks_after_announce(p.read_text(encoding="utf-8"))
    ]
    assert not found, "input checks after the announcement:\n" + "\n".join(found)


def test_the_static_guard_can_fail():
    planted = (
        "def run(args):\n"
        "    _progress.announce(args, 'x')\n"
        "    check_range('--a', 1, 0, 2)\n"
        "    if bad:\n"
        "        raise InputError('--b: no')\n"
    )
    assert checks_after_announce(planted) == ["run:3: check_range()", "run:5: raise InputError"]
    ok = "def run(args):\n    check_range('--a', 1, 0, 2)\n    _progress.announce(args, 'x')\n"
    assert checks_after_announce(ok) == []
