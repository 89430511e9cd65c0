"""Every ``retcon`` command line in the docs parses with the real parser; the quick ones run
(issue 33, item 7: docs that run).

The command lines are the ``retcon ...`` and ``python -m retcon ...`` invocations in the fenced
code blocks (``bash``, ``console``, ``sh``, ``shell`` and unlabeled) of README.md and docs/*.md.
A block with ``$ `` prompts has its commands on the prompt lines only (the other lines are output);
a trailing backslash continues a line; ``VAR=value`` prefixes, ``&&`` / ``;`` / ``|`` chains and
redirections (``> file``, ``2>&1``) are shell, not arguments; a line that does not start an
invocation (prose, Python, output) is not a command. Placeholders are what the docs
write them as (``FILE``, ``DIR``, ``URL``, ``M``, ``path/to/locomo10.json``) and need no
substitution: the option types that check a value while parsing (``--seed``, the list and budget
options, the integers) are given real values in every block today, and no type looks at a path;
a placeholder there (``--seed S``) would fail, and the block should then show a value.
``[--option value]`` is an optional part, checked both with and without it; a ``...`` argument
elides options, so a line with one may leave out a required option (any other refusal still
fails it).

Fast tier: each command goes through ``retcon.cli.build_parser().parse_args``, as
``retcon.cli.main`` does, and nothing runs: an unknown option, a refused (moved) option, a wrong
subcommand, a bad choice or value, a missing required option, or a line with nothing to run
(``retcon``, ``retcon pair``, ``retcon data`` alone) fails the test, naming the doc, the line and
the command.

Slow tier: the offline commands of seconds each run as written, with ``bash`` in a fresh folder
(``retcon`` on ``PATH`` is this environment's), in doc order where one reads what another wrote,
with LoCoMo (``tests._data``) linked in at the README's ``path/to/locomo10.json``:

* README.md: ``crossover`` (both lines, and the ``printf`` that writes the lengths file),
  ``simulate --scenario longmemeval-like``, ``simulate --print-scenario`` and ``--config``,
  ``timeline --scenario single-cluster-stream --out ...`` (the form without a subcommand), and on
  LoCoMo ``pair simulate``, ``pair locomo``, ``fit`` and ``predict`` (on the LoCoMo pairs: groups
  the router has not seen), ``timeline locomo --passes 4`` and ``timeline identify``;
* docs/simulation.md: all five lines (``simulate`` three ways, ``--config`` at 10^6 queries,
  ``stress``);
* docs/timeline.md: ``timeline simulate --scenario single-cluster-stream``.

Parse-checked only, and why:

* an LLM endpoint: ``--operators llm`` / ``--reader llm`` / ``--llm-judge llm`` / ``--llm-*``
  lines of docs/paper-checks.md, docs/paper-protocol.md and docs/timeline.md (the ``llm`` tier
  has its own tests);
* a download or data not in ../shared: ``retcon data fetch locomo`` (README.md,
  docs/real-data.md) and every LongMemEval line (``longmemeval_oracle.json``);
* long runs (about 30 s to many minutes on 2 cores): ``evaluate`` (about 100 s), ``identify``
  (30 s), every ``pair locomo`` (36 s for 25 budgets; end-to-end retrieval and the dense embedder
  longer; docs/end-to-end.md, docs/real-data.md, docs/paper-protocol.md, README.md), every
  ``paper-checks``, ``bench`` (benchmarks: docs/performance.md, README.md), the router over time
  (``--policy router``), the other lines of docs/timeline.md (every policy on a stream or on
  LoCoMo, 10 to 20 s each, the forms the README's lines run), and the ``fit`` of
  docs/real-data.md (it reads ``pair locomo``'s file);
* a file the doc leaves to the reader (``mine.jsonl``, ``other.jsonl``, ``my-stream.toml``);
* run elsewhere or the same as a line that runs here: docs/tutorial.md (tests/retcon/
  test_tutorial.py runs it as written and checks its output), the README's ``retcon simulate``
  after the install and ``stress`` (docs/simulation.md's same commands run here), and
  docs/oas.md's ``pair simulate``, ``fit`` and ``predict`` (the README's forms run here).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from retcon.cli import build_parser
from tests._data import LOCOMO_PATH, needs_locomo

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# Fenced blocks whose lines may be command lines; a ``python``, ``toml`` or ``text`` block is not.
_SHELL_BLOCKS = {"", "bash", "console", "sh", "shell", "shell-session", "zsh"}
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_CONTROL = {"&&", "||", ";", "|", "|&", "&"}
_ENV_PREFIX = re.compile(r"^[A-Za-z_]\w*=")
_OPTIONAL = re.compile(r"\[(--[^\[\]]*)\]")  # `[--type-source gold]`, not `e2e[-gold].jsonl`


@dataclass(frozen=True)
class ShellLine:
    """One shell command line of a doc: continuations joined, the prompt taken off."""

    doc: str  # relative to the repository: "README.md", "docs/oas.md"
    line: int  # where it starts in the doc (1-based)
    end: int  # its last line (after its backslash continuations)
    text: str


@dataclass(frozen=True)
class DocCommand:
    """One ``retcon`` invocation of a doc: its arguments, in each form the doc allows."""

    doc: str
    line: int
    end: int
    variants: tuple[tuple[str, ...], ...]  # the arguments after `retcon`, with / without [--...]
    elided: bool  # the doc wrote `...` for options it left out

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def fenced_blocks(text: str) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """``(label, [(line number, line), ...])`` of each fenced code block of a markdown text."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, label = m.group(1), m.group(2).lower()
        body = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append((j + 1, lines[j]))
            j += 1
        yield label, body
        i = j + 1


def shell_lines(text: str, doc: str) -> Iterator[ShellLine]:
    """The command lines of the shell blocks of a markdown text, with prompts and continuations
    handled and heredoc bodies left out."""
    for label, body in fenced_blocks(text):
        if label not in _SHELL_BLOCKS:
            continue
        prompted = any(line.lstrip().startswith("$ ") for _, line in body)
        k = 0
        while k < len(body):
            number, line = body[k]
            k += 1
            if prompted:
                if not line.lstrip().startswith("$ "):
                    continue  # a line of output
                line = line.lstrip()[2:]
            end = number
            while line.rstrip().endswith("\\") and k < len(body):
                more = body[k][1].strip()
                more = more[2:] if prompted and more.startswith("> ") else more
                line = line.rstrip()[:-1].rstrip() + " " + more
                end = body[k][0]
                k += 1
            if not line.strip():
                continue
            yield ShellLine(doc, number, end, line.strip())
            heredoc = _HEREDOC.search(line)
            if heredoc:  # the body is the input of a program, not shell
                while k < len(body) and body[k][1].strip() != heredoc.group(2):
                    k += 1
                k += 1


def simple_commands(line: str) -> list[list[str]]:
    """The words of each simple command of a shell line: the chain split at ``&&``, ``||``,
    ``;``, ``|`` and ``&``, redirections and their targets dropped. Raises ``ValueError`` on
    unbalanced quotes."""
    # `2>&1`, `2> err`: the descriptor number goes with its redirection (shlex would keep it as
    # a word); only a number that starts a word and touches `<` or `>` is taken off.
    line = re.sub(r"(?<!\S)\d+(?=[<>])", "", line)
    lex = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
    lex.whitespace_split = True
    commands: list[list[str]] = [[]]
    words = iter(lex)
    for word in words:
        if word in _CONTROL:
            commands.append([])
        elif set(word) <= set("<>&|") and ("<" in word or ">" in word):
            next(words, None)  # the redirection's target
        else:
            commands[-1].append(word)
    return [c for c in commands if c]


def retcon_arguments(words: list[str]) -> list[str] | None:
    """The arguments after ``retcon`` (or ``python -m retcon``) of a simple command, else None."""
    while words and _ENV_PREFIX.match(words[0]):
        words = words[1:]
    if words[:1] == ["retcon"]:
        return words[1:]
    if (
        len(words) >= 3
        and re.fullmatch(r"python[\d.]*", words[0])
        and words[1:3] == ["-m", "retcon"]
    ):
        return words[3:]
    return None


def doc_commands(text: str, doc: str) -> list[DocCommand]:
    """Every ``retcon`` invocation in the shell blocks of a markdown text, in page order."""
    found = []
    for sl in shell_lines(text, doc):
        with_optional = _OPTIONAL.sub(r"\1", sl.text)
        without = _OPTIONAL.sub("", sl.text)
        forms = [with_optional] if with_optional == without else [with_optional, without]
        try:
            per_form = [[retcon_arguments(c) for c in simple_commands(f)] for f in forms]
        except ValueError:
            continue  # unbalanced quotes: Python or prose (test_every_retcon_line_is_collected)
        for i in range(len(per_form[0])):
            args = [form[i] for form in per_form]
            if args[0] is None:
                continue
            variants = tuple(tuple(w for w in a or () if w != "...") for a in args)
            elided = "..." in (args[0] or ())
            found.append(DocCommand(sl.doc, sl.line, sl.end, variants, elided))
    return found


def parse_failure(argv: tuple[str, ...], *, elided: bool = False) -> str | None:
    """Why ``retcon argv`` does not parse (argparse's one error line), or None when it does.

    Parses as ``retcon.cli.main`` does (a fresh ``build_parser()``, ``parse_args``) and runs
    nothing; ``--help`` and ``--version`` exit 0 and pass; a parse without a command to run is
    refused as ``main`` refuses it (it prints the help and exits 2).
    """
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            args = build_parser().parse_args(list(argv))
    except SystemExit as e:
        if e.code == 0:
            return None
        message = err.getvalue().strip() or f"exit status {e.code}"
        if elided and "the following arguments are required" in message:
            return None  # the doc's `...` stands for them
        return message
    if getattr(args, "func", None) is None:
        return "no command to run (retcon prints its help and exits 2)"
    for dest, what in (("pair_command", "SOURCE"), ("data_command", "ACTION")):
        # `retcon pair` / `retcon data` alone print their help and exit 2 (main names these too)
        if hasattr(args, dest) and getattr(args, dest) is None:
            return f"no {what} after `retcon {args.command}` (it prints its help and exits 2)"
    return None


def failures(cmd: DocCommand) -> list[str]:
    """``DOC:LINE: retcon ARGS: ERROR`` for each form of ``cmd`` that does not parse."""
    out = []
    for argv in cmd.variants:
        why = parse_failure(argv, elided=cmd.elided)
        if why is not None:
            out.append(f"{cmd.where}: retcon {shlex.join(argv)}\n  {why}")
    return out


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


COMMANDS = [c for doc in DOCS for c in doc_commands(doc.read_text(encoding="utf-8"), _rel(doc))]


def _ids(commands: list[DocCommand]) -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for c in commands:
        seen[c.where] = seen.get(c.where, 0) + 1
        ids.append(c.where if seen[c.where] == 1 else f"{c.where}#{seen[c.where]}")
    return ids


@pytest.mark.parametrize("cmd", COMMANDS, ids=_ids(COMMANDS))
def test_doc_command_parses(cmd):
    """The command line parses with the real parser (every form of it): no unknown, refused or
    moved option, no wrong subcommand or choice, no missing required option."""
    problems = failures(cmd)
    assert not problems, "a documented command does not parse:\n" + "\n".join(problems)


def test_the_docs_have_commands():
    """The collection found the documented commands (an empty collection would pass vacuously):
    each of these pages has some, and the README's first job, `retcon simulate`, is among them."""
    docs = {c.doc for c in COMMANDS}
    for doc in (
        "README.md",
        "docs/end-to-end.md",
        "docs/oas.md",
        "docs/paper-checks.md",
        "docs/paper-protocol.md",
        "docs/performance.md",
        "docs/real-data.md",
        "docs/simulation.md",
        "docs/timeline.md",
        "docs/tutorial.md",
    ):
        assert doc in docs, f"no retcon command found in {doc}"
    assert any(c.doc == "README.md" and c.variants == (("simulate",),) for c in COMMANDS)


def test_every_retcon_line_is_collected():
    """No line of a shell block that names a `retcon` subcommand (outside a comment) escapes the
    collection: each is part of a collected command, so a line the tokenizer or the prompt rules
    dropped shows here instead of going unchecked."""
    covered = {(c.doc, n) for c in COMMANDS for n in range(c.line, c.end + 1)}
    # `retcon` where a command starts: line start, after a prompt, `VAR=` prefixes or `&&`/`;`/`|`
    looks_like = re.compile(
        r"(?:^|&&|\|\||[;|&(])\s*(?:\$\s+)?(?:[A-Za-z_]\w*=\S*\s+)*"
        r"(?:retcon|python[\d.]*\s+-m\s+retcon)(?![\w.-])"
    )
    missed = []
    for doc in DOCS:
        for label, body in fenced_blocks(doc.read_text(encoding="utf-8")):
            if label not in _SHELL_BLOCKS:
                continue
            prompted = any(line.lstrip().startswith("$ ") for _, line in body)
            for number, line in body:
                code = re.sub(r"(^|\s)#.*$", "", line)
                if prompted and not line.lstrip().startswith(("$ ", "> ")):
                    continue  # output
                if looks_like.search(code) and (_rel(doc), number) not in covered:
                    missed.append(f"{_rel(doc)}:{number}: {line.strip()}")
    assert not missed, "retcon lines the collector did not take:\n" + "\n".join(missed)


# The collector and the check on planted lines: they show the test above can fail, and how.
_PLANTED = """\
Some prose that mentions retcon pair locomo --out wrong.jsonl outside a block.

```bash
retcon pair locomo --out x.jsonl
RETCON_DATA_DIR=/data retcon simulate --scenario single-cluster \\
    --json 2>&1 | tail -3 && retcon stress --out runs/stress; echo done
python -m retcon crossover --json > out.json   # a comment
retcon timeline simulate [--policy router] --budgets 512 2048
retcon pair longmemeval --operators llm ...
```

```console
$ python3 -m retcon --version
retcon 0.1.0
$ retcon fit --data p.jsonl \\
> --router-out r.json
```

```python
subprocess.run(["retcon", "simulate"])
retcon = "not a command"
```

```
python - <<'PY'
retcon simulate --not-shell
PY
export RETCON_LLM_MODEL=m
```
"""


def test_collector_reads_the_shell_forms():
    """Prompts, continuations, `VAR=` prefixes, chains, pipes, redirections, `python -m retcon`,
    optional parts and `...` come out as the arguments a user's shell would pass; output lines,
    Python, heredoc bodies and prose are not commands."""
    got = [(c.line, c.variants, c.elided) for c in doc_commands(_PLANTED, "planted.md")]
    assert got == [
        (4, (("pair", "locomo", "--out", "x.jsonl"),), False),
        (5, (("simulate", "--scenario", "single-cluster", "--json"),), False),
        (5, (("stress", "--out", "runs/stress"),), False),
        (7, (("crossover", "--json"),), False),
        (
            8,
            (
                ("timeline", "simulate", "--policy", "router", "--budgets", "512", "2048"),
                ("timeline", "simulate", "--budgets", "512", "2048"),
            ),
            False,
        ),
        (9, (("pair", "longmemeval", "--operators", "llm"),), True),
        (13, (("--version",),), False),
        (15, (("fit", "--data", "p.jsonl", "--router-out", "r.json"),), False),
    ]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("retcon pair locomo --out x.jsonl", "use --output FILE"),  # refused: --out is a folder
        ("retcon fit --data p.jsonl --out r.json", "use --router-out FILE"),
        ("retcon timeline --data locomo10.json", "--data is read by `retcon timeline locomo"),
        ("retcon simulate --no-such-option", "unrecognized arguments: --no-such-option"),
        ("retcon pair nowhere --output x.jsonl", "invalid choice: 'nowhere'"),
        ("retcon pair locomo --reader nobody --output x.jsonl", "invalid choice: 'nobody'"),
        ("retcon fit --data p.jsonl", "the following arguments are required: --router-out"),
        ("retcon simulate --seed -1", "--seed"),
        ("retcon -v", "no command to run"),
        ("retcon pair --help-me", "unrecognized arguments"),
        ("retcon pair", "no SOURCE after `retcon pair`"),
        ("retcon pair longmemeval --operators nope ...", "invalid choice: 'nope'"),
    ],
)
def test_a_planted_bad_line_is_reported(line, says):
    """A wrong command line in a doc fails the check, with the doc, the line and the command."""
    (cmd,) = doc_commands(f"# A page\n\n```bash\n{line}\n```\n", "planted.md")
    problems = failures(cmd)
    assert len(problems) == 1
    assert problems[0].startswith(f"planted.md:4: {line.replace(' ...', '')}\n")
    assert says in problems[0]


def test_an_elided_line_may_leave_out_only_required_options():
    """`...` excuses a missing required option, and nothing else; without it the same line fails."""
    assert parse_failure(("pair", "longmemeval", "--operators", "llm"), elided=True) is None
    assert "required: --output" in (parse_failure(("pair", "longmemeval")) or "")


# The slow tier: doc lines that run offline in seconds, as written. Each scenario runs its steps
# in order in one fresh folder: a step is a doc line (the doc's text before any `#` comment,
# spaces normalized) or a function that prepares the folder (what the doc leaves to the reader).


def _link_locomo(work: Path) -> None:
    """LoCoMo where the README's lines read it, ``path/to/locomo10.json``."""
    target = work / "path" / "to" / "locomo10.json"
    target.parent.mkdir(parents=True)
    target.symlink_to(LOCOMO_PATH)


Step = str | Callable[[Path], None]

SLOW: dict[str, tuple[str, list[Step], list[str]]] = {
    # name: (doc, steps, files the steps must have written)
    "readme-theory-simulate": (
        "README.md",
        [
            "retcon crossover --dist exponential --mean 300 --compress-ratio 0.3 --fidelity 0.85 "
            "--acc-raw 0.9 --acc-guess 0.1 --json",
            r"printf '120\n340\n95\n610\n280\n45\n175\n' > my-lengths.txt",
            "retcon crossover --lengths my-lengths.txt",
            "retcon simulate --scenario longmemeval-like --queries 20000 --out runs/lme",
            "retcon simulate --print-scenario locomo-like > my-scenario.toml",
            "retcon simulate --config my-scenario.toml --json",
        ],
        ["my-lengths.txt", "my-scenario.toml", "runs/lme/sidecar.json"],
    ),
    "readme-timeline": (
        "README.md",
        ["retcon timeline --scenario single-cluster-stream --out runs/timeline"],
        ["runs/timeline/sidecar.json"],
    ),
    "simulation": (
        "docs/simulation.md",
        [
            "retcon simulate",
            "retcon simulate --scenario single-cluster --json",
            "retcon simulate --print-scenario locomo-like > my.toml",
            "retcon simulate --config my.toml --queries 1000000 --seed 3 --out runs/my",
            "retcon stress --out runs/stress",
        ],
        ["my.toml", "runs/my/sidecar.json", "runs/stress/sidecar.json"],
    ),
    "timeline": (
        "docs/timeline.md",
        ["retcon timeline simulate --scenario single-cluster-stream"],
        [],
    ),
}
SLOW_LOCOMO: dict[str, tuple[str, list[Step], list[str]]] = {
    "readme-router": (
        "README.md",
        [
            "retcon pair simulate --instances 20000 --output paired.jsonl",
            "retcon pair locomo --operators dataset --reader lexical --output locomo.jsonl",
            "retcon fit --data paired.jsonl --router-out router.json --alpha 0.1",
            "retcon predict --router router.json --data locomo.jsonl --decisions decisions.jsonl",
        ],
        ["paired.jsonl", "locomo.jsonl", "router.json", "decisions.jsonl"],
    ),
    "readme-timeline-locomo": (
        "README.md",
        [
            _link_locomo,
            "retcon timeline locomo --data path/to/locomo10.json --passes 4",
            "retcon timeline identify --data path/to/locomo10.json",
        ],
        [],
    ),
}


def _code(text: str) -> str:
    """A shell line without its comment, spaces normalized (how the slow tier names a line)."""
    return " ".join(re.sub(r"(^|\s)#.*$", "", text).split())


def _doc_line(doc: str, code: str) -> ShellLine:
    """The one shell line of ``doc`` whose code is ``code``."""
    lines = [
        sl
        for sl in shell_lines((REPO / doc).read_text(encoding="utf-8"), doc)
        if _code(sl.text) == code
    ]
    assert len(lines) == 1, (
        f"{doc} should hold the line `{code}` once (found {len(lines)}): if the doc changed, "
        "update the slow tier's list in tests/cli/test_docs_commands.py"
    )
    return lines[0]


def test_the_slow_tier_lines_are_in_the_docs():
    """Each line the slow tier runs is a line of its doc, once (so the slow tier runs what the
    docs say, and a changed doc fails here, in the fast tier, before the slow tier would)."""
    for doc, steps, _ in (*SLOW.values(), *SLOW_LOCOMO.values()):
        for step in steps:
            if isinstance(step, str):
                _doc_line(doc, step)


def _run_scenario(doc: str, steps: list[Step], writes: list[str], tmp_path: Path) -> None:
    """Run the steps in a fresh folder with this environment's ``retcon`` first on ``PATH``;
    each exits 0, a ``--json`` line prints one JSON object, and the listed files exist."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "retcon"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m retcon "$@"\n')
    shim.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    for step in steps:
        if not isinstance(step, str):
            step(work)
            continue
        sl = _doc_line(doc, step)
        proc = subprocess.run(
            ["bash", "-o", "pipefail", "-c", sl.text],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        where = f"{sl.doc}:{sl.line}: {sl.text}"
        assert proc.returncode == 0, f"{where}\nexit {proc.returncode}:\n{proc.stderr}"
        if "--json" in shlex.split(step) and ">" not in step:
            assert isinstance(json.loads(proc.stdout), dict), f"{where}: not one JSON object"
    for name in writes:
        assert (work / name).is_file(), f"{doc}: the commands did not write {name}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW))
def test_doc_commands_run(name, tmp_path):
    """The doc's quick offline command lines run as written, in order, and exit 0."""
    _run_scenario(*SLOW[name], tmp_path)


@pytest.mark.slow
@needs_locomo
@pytest.mark.parametrize("name", sorted(SLOW_LOCOMO))
def test_doc_commands_run_on_locomo(name, tmp_path):
    """The doc's quick LoCoMo command lines run as written on the real file, and exit 0."""
    _run_scenario(*SLOW_LOCOMO[name], tmp_path)
