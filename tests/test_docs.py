"""The documents cannot rot: their runnable commands run, their links resolve, their tables are current.

A fenced block is *runnable* when the line before it is ``<!-- runnable -->`` (protocol.md's
recipe, ``<!-- recompute ... -->``, counts too). Each ``sh`` block runs with ``bash -e -o
pipefail`` and each ``python`` block with the checkout's interpreter, in a scratch directory
that holds ``.venv`` (a link to the checkout's), ``my.csv`` (a small table with a binary target
``label``) and ``sales.csv`` (a small table ordered by ``signup_date``, target ``churned``), with
``ENCBENCH_DB`` naming a database there: the commands as a reader pastes them, on a small
dataset. The ``python`` blocks of a document run as one notebook: each after the blocks before it.

The link check covers README.md, CHANGELOG.md and docs/**/*.md: every relative link names a file
that exists, and every ``#anchor`` a heading of its document (GitHub's heading ids).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from encbench.store import snapshot_path

REPO = Path(__file__).resolve().parents[1]
RUNNABLE_DOCS = (REPO / "README.md", REPO / "docs" / "user-guide.md", REPO / "docs" / "protocol.md")
MARKER = re.compile(r"^<!-- (runnable|recompute)\b.*-->\s*$")
FENCE = re.compile(r"^```(\w+)?")
BLOCK_TIMEOUT = 600


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def fenced_blocks(path: Path) -> list[tuple[int, str, str, bool]]:
    """``(line, language, code, runnable)`` of every fenced block of a Markdown file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match:
            start, language = i, match.group(1) or ""
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            previous = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
            blocks.append((start + 1, language, "\n".join(lines[start + 1:j]) + "\n",
                           bool(MARKER.match(previous))))
            i = j + 1
        else:
            i += 1
    return blocks


def runnable_blocks() -> list[Block]:
    """The runnable blocks in document order; a document's ``python`` blocks are one notebook, run
    once in the place of its last block (each block after those before it, a comment naming its
    line)."""
    out = []
    for path in RUNNABLE_DOCS:
        notebook, last_line, slot = "", None, 0
        for line, language, code, runnable in fenced_blocks(path):
            if not runnable:
                continue
            assert language in ("sh", "python"), f"{path.name}:{line}: runnable blocks are sh or python"
            if language == "python":
                notebook += f"# --- {path.name}:{line}\n{code}\n"
                last_line, slot = line, len(out)
            else:
                out.append(Block(path, line, language, code))
        if last_line is not None:
            out.insert(slot, Block(path, last_line, "python", notebook))
    return out


BLOCKS = runnable_blocks()


def _my_csv(path: Path) -> None:
    """300 rows: two categorical columns, one numeric, a binary target that depends on them."""
    rng = np.random.default_rng(40)
    n = 300
    colour = rng.choice(["red", "green", "blue", "grey", "black"], n)
    city = rng.choice([f"city{i:02d}" for i in range(20)], n)
    size = rng.normal(10, 3, n).round(2)
    logit = (np.isin(colour, ["red", "green"]) * 1.2 + (size - 10) / 4 + rng.normal(0, 1, n))
    label = np.where(logit > 0.5, "yes", "no")
    pd.DataFrame({"colour": colour, "city": city, "size": size, "label": label}).to_csv(path, index=False)


def _sales_csv(path: Path) -> None:
    """300 customers signing up over 2024, a plan and a region, churn depending on the plan."""
    rng = np.random.default_rng(41)
    n = 300
    day = np.sort(rng.integers(0, 366, n))
    signup = (pd.Timestamp("2024-01-01") + pd.to_timedelta(day, unit="D")).strftime("%Y-%m-%d")
    plan = rng.choice(["basic", "plus", "pro"], n)
    region = rng.choice(["north", "south", "east", "west"], n)
    churn = rng.random(n) < np.where(plan == "basic", 0.5, 0.25)
    pd.DataFrame({"signup_date": signup, "plan": plan, "region": region,
                  "monthly_fee": np.where(plan == "basic", 10, np.where(plan == "plus", 20, 35)),
                  "churned": np.where(churn, "yes", "no")}).to_csv(path, index=False)


@pytest.fixture(scope="module")
def workspace(published_db, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A scratch directory as a reader's checkout looks to the commands: ``.venv``, the example
    files and a database (a copy of the published test database: ``db init`` completes it)."""
    root = tmp_path_factory.mktemp("docs")
    (root / ".venv").symlink_to(REPO / ".venv")
    _my_csv(root / "my.csv")
    _sales_csv(root / "sales.csv")
    db = root / "db" / "encbench.duckdb"
    db.parent.mkdir()
    shutil.copyfile(published_db, db)
    shutil.copyfile(snapshot_path(published_db), snapshot_path(db))
    env = {**os.environ, "ENCBENCH_DB": str(db), "ENCBENCH_WORKER_IDLE_EXIT": "1", "PYTHONPATH": str(REPO),
           "MPLBACKEND": "Agg"}
    return root, env


def test_only_marked_blocks_run(tmp_path):
    """A block runs when the line before it (blank lines aside) is the marker; other blocks,
    and markers before prose, do not make a block runnable."""
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- runnable -->\n```sh\necho one\n```\n\n```sh\necho two\n```\n\n"
                   "<!-- runnable -->\ntext\n```python\nprint(3)\n```\n<!-- recompute: x -->\n\n"
                   "```python\nprint(4)\n```\n", encoding="utf-8")
    assert [(language, code, runnable) for _, language, code, runnable in fenced_blocks(doc)] == [
        ("sh", "echo one\n", True), ("sh", "echo two\n", False), ("python", "print(3)\n", False),
        ("python", "print(4)\n", True)]


def test_blocks_are_found():
    """The documents mark runnable blocks in README, the user guide and protocol.md, and every
    command of the command line appears in a runnable block of README or the guide."""
    assert {b.path.name for b in BLOCKS} == {p.name for p in RUNNABLE_DOCS}
    shell = "\n".join(b.code for b in BLOCKS if b.language == "sh")
    for command in ("db init", "db info", "run ", "runs", "encoders", "place", "recommend"):
        assert f"-m encbench {command}" in shell, command


#: what an unmarked ``sh`` block of README and the guide may hold: the set-up, a server, a cluster or
#: another environment (the checkout's own commands are all marked and run above)
UNRUN_PREFIXES = ("make ", "python3.11 -m venv ", "~/encbench-env/bin/", ".venv/bin/python -m streamlit ")


def test_unmarked_commands_are_set_up_servers_or_clusters():
    """Every command line of an unmarked sh block is one that starts a server, a cluster or an
    installation, so no encbench command of the checkout escapes the runnable-block test."""
    unrun = []
    for path in RUNNABLE_DOCS:
        for line, language, code, runnable in fenced_blocks(path):
            if language == "sh" and not runnable:
                unrun += [f"{path.name}:{line}: {text}" for text in code.splitlines()
                          if text.strip() and not text.startswith((" ", "#", *UNRUN_PREFIXES))]
    assert not unrun, unrun


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_runnable_block_runs(block, workspace):
    """The block runs as written, without an error, in a reader's checkout (scratch copy)."""
    root, env = workspace
    if block.language == "sh":
        command = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    else:
        command = [sys.executable, "-c", block.code]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    assert done.returncode == 0, (f"{block.name} failed ({done.returncode}):\n{block.code}\n"
                                  f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")


# -- links ----------------------------------------------------------------------------------------
LINKED_DOCS = sorted({REPO / "README.md", REPO / "CHANGELOG.md", *(REPO / "docs").rglob("*.md")})
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _prose(text: str) -> str:
    """The text without fenced blocks and inline code, where brackets are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    ids: dict[str, int] = {}
    out = set()
    for line in re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = github_anchor(match.group(1))
            n = ids.get(base, 0)
            ids[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def test_github_anchor_matches_hand_computed_ids():
    """Heading ids as GitHub computes them, on headings of these documents."""
    assert github_anchor("Time splits") == "time-splits"
    assert github_anchor("1. The data") == "1-the-data"
    assert github_anchor("Tasks: binary, multiclass, regression") == "tasks-binary-multiclass-regression"
    assert github_anchor("The app, page by page") == "the-app-page-by-page"
    assert github_anchor("Where do today's encoders rank? (2026-12-03)") == "where-do-todays-encoders-rank-2026-12-03"


def broken_links(doc: Path) -> list[str]:
    """The relative links of ``doc`` whose file does not exist or whose #anchor is no heading."""
    broken = []
    for target in LINK.findall(_prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (doc.parent / file_part).resolve() if file_part else doc
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


def test_link_check_finds_what_is_broken(tmp_path):
    """The checker reports a missing file and a missing anchor, in this document or another, and
    leaves alone external links, links inside code and a repeated heading's second id."""
    (tmp_path / "other.md").write_text("# Other\n\n## Part\n\n## Part\n", encoding="utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\n## Here it is\n\n[ok](other.md) [ok](other.md#part-1) [ok](#here-it-is) "
                   "[web](https://example.org/x) `[code](nowhere.md)`\n\n```sh\n[x](nowhere.md)\n```\n"
                   "[file](missing.md) [anchor](other.md#nothing) [self](#not-here) ![img](pic.png)\n",
                   encoding="utf-8")
    assert broken_links(doc) == ["missing.md: no such file", "other.md#nothing: no heading #nothing in other.md",
                                 "#not-here: no heading #not-here in doc.md", "pic.png: no such file"]


@pytest.mark.parametrize("doc", LINKED_DOCS, ids=[str(p.relative_to(REPO)) for p in LINKED_DOCS])
def test_links_resolve(doc):
    """Every relative link of the document names an existing file, and its #anchor a heading."""
    assert doc.exists()
    broken = broken_links(doc)
    assert not broken, f"{doc.relative_to(REPO)}: " + "; ".join(broken)


@pytest.fixture(scope="module")
def gen_tables():
    """docs/gen_tables.py as a module, its ``main(argv)`` the script's command line, run in this
    process (a fresh interpreter would import the registries' libraries again)."""
    spec = importlib.util.spec_from_file_location("gen_tables", REPO / "docs" / "gen_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_protocol_tables_are_current(gen_tables, capsys):
    """docs/protocol.md's generated tables equal what the registries give today
    (python docs/gen_tables.py rewrites them)."""
    assert gen_tables.main(["--check"]) == 0, capsys.readouterr()
    assert "is current" in capsys.readouterr().out


def test_stale_protocol_tables_are_caught(gen_tables, tmp_path, capsys):
    """--check fails on a protocol.md whose generated table differs from the registries."""
    stale = tmp_path / "protocol.md"
    stale.write_text((REPO / "docs" / "protocol.md").read_text(encoding="utf-8").replace(
        "max_depth {2, 5, None}", "max_depth {2, 5}"), encoding="utf-8")
    assert gen_tables.main(["--check", "--path", str(stale)]) == 1
    assert "not current" in capsys.readouterr().err


def test_readme_is_a_front_page():
    """README stays short (at most 250 lines), opens on what encbench is for all three tasks and
    names the two commands first."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    head = text[:text.index("\n## ", text.index("\n## ") + 1)]
    assert all(word in head for word in ("binary", "multiclass", "regression", "make run", "make test"))
