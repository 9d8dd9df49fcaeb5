"""The documentation stays true: every link resolves, the generated pages match what generates
them, every fabgen command the README and the user guide show runs, and the README stays a
front door (at most about 200 lines)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, git
from fabgen.cli import app

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    out, fenced = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.add(_slug(line.lstrip("#")))
    return out


def broken_links(page: Path) -> list[str]:
    broken = []
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address: not checked here (no network)
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page: Path) -> None:
    assert not broken_links(page)


def test_the_link_check_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## Two words\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#two-words) [gone](c.md) [no anchor](a.md#three) [web](https://x.y/z)\n")
    assert broken_links(page) == ["c.md", "a.md#three"]


def test_the_readme_is_a_front_door() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    for heading in ("## Install", "## Quick start", "## Your first inventory", "## What it does not do"):
        assert heading in text
    assert "make example" in text and "make test" in text


def test_the_command_pages_are_generated_from_the_command_line() -> None:
    from fabgen.clidoc import pages

    folder = ROOT / "docs" / "reference" / "commands"
    assert {p.name: p.read_text() for p in folder.glob("*.md")} == pages(), \
        "regenerate: python -m fabgen.clidoc docs/reference/commands"


def _commands(page: Path) -> list[str]:
    out, block = [], False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            block = line.strip() == "```sh"
            continue
        if block and line.startswith("fabgen ") and "--install-completion" not in line:
            out.append(re.sub(r"\s+#.*$", "", line))
    return out


GUIDE = [p for p in [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))] if _commands(p)]


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: p.name)
def test_every_command_shown_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each `fabgen ...` line of a ```sh block, run as written from a copy of the repository's
    inventories (and test data), in a git repository whose origin/main is that copy; a generic
    `inventory.yaml` is the Spectrum-X example. `> file` writes the output there."""
    commands = _commands(page)
    shutil.copytree(ROOT / "inventories", tmp_path / "inventories")
    shutil.copytree(ROOT / "tests" / "data", tmp_path / "tests" / "data")
    shutil.copy(ROOT / "inventories" / "spectrumx-1su.yaml", tmp_path / "inventory.yaml")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    git(tmp_path, "update-ref", "refs/remotes/origin/main", "HEAD")
    monkeypatch.chdir(tmp_path)
    for line in commands:
        words = shlex.split(line)[1:]
        target = None
        if ">" in words:
            target = words[words.index(">") + 1]
            words = words[:words.index(">")]
        res = CliRunner().invoke(app, words)
        assert res.exit_code == 0, f"{page.name}: `{line}` exited {res.exit_code}: {res.output[-1500:]}"
        if target:
            Path(target).write_text(res.stdout)
