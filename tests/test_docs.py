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


# A README section named from elsewhere: a link `README.md#anchor`, or prose that names one
# ("the README's "Inventory format" section"); either must name a heading the README has.
README_LINK = re.compile(r"README\.md#([\w-]+)")
README_PROSE = re.compile(r"README(?:\.md)?(?:'s)?,? (?:section )?\"([^\"]+)\"")


def broken_readme_references(text: str, readme: str) -> list[str]:
    """The README sections `text` names that `readme` has no heading for."""
    headings = [line.lstrip("#").strip() for line in readme.splitlines() if line.startswith("#")]
    anchors = {_slug(h) for h in headings}
    broken = [f"README.md#{a}" for a in README_LINK.findall(text) if a not in anchors]
    broken += [f'README "{name}"' for name in README_PROSE.findall(text) if name not in headings]
    return broken


def test_every_readme_section_named_in_the_docs_exists() -> None:
    """docs/inventory.md named the README's "Inventory format" section after it had moved to the
    user guide; every page, and the sources that write the generated ones, name only headings
    the README has."""
    readme = (ROOT / "README.md").read_text()
    sources = [*PAGES, *sorted((ROOT / "generator" / "fabgen").rglob("*.py"))]
    broken = {str(p.relative_to(ROOT)): b for p in sources if (b := broken_readme_references(p.read_text(), readme))}
    assert not broken


def test_the_readme_check_finds_a_broken_link_and_a_broken_name() -> None:
    readme = "# fabgen\n\n## Your first inventory\n\n## Install\n"
    text = ('[ok](../README.md#your-first-inventory) [gone](../README.md#inventory-format) '
            'the README\'s "Install" section; the README\'s "Inventory format" section\n')
    assert broken_readme_references(text, readme) == ["README.md#inventory-format", 'README "Inventory format"']


CATALOG_LISTS = {  # the pages that list the catalog's node models, and the text that opens the list
    "README.md": "a catalog model (",
    "docs/guide/concepts.md": "The catalog has",
    "docs/guide/inventory.md": "| `node_groups[].model` |",
    "docs/inventory.md": "| `node_groups[].model` |",
}


def missing_models(text: str, opening: str, models: list[str]) -> list[str]:
    """The models absent from the list that follows `opening` (to the end of its sentence)."""
    start = text.index(opening)
    listed = text[start:text.find(")", start + len(opening)) + 1 if "(" in opening else text.find(";", start)]
    return [m for m in models if f"{m}`" not in listed and f"{m}," not in listed and f"{m})" not in listed]


def test_every_catalog_model_is_listed_where_the_models_are() -> None:
    from fabgen.spec.catalog import NODES

    models = list(NODES)
    assert "dgx-h200" in models
    for page, opening in CATALOG_LISTS.items():
        assert not missing_models((ROOT / page).read_text(), opening, models), page
    hardware = (ROOT / "docs" / "hardware.md").read_text()
    assert all(f"| `{m}` |" in hardware or f"`{m}`," in hardware for m in models)
    # the check itself: a list without one model is caught
    text = (ROOT / "README.md").read_text().replace("`dgx-h200`, ", "")
    assert missing_models(text, CATALOG_LISTS["README.md"], models) == ["dgx-h200"]


def _octet(formula: str, k: int) -> int:
    """The page's second octet for fabric k: sums of terms `n`, `nk` and `k` ("128+16k", "255-k")."""
    total = 0
    for sign, coef, var in re.findall(r"([+-]?)(\d*)(k?)", formula.replace(" ", "")):
        if not coef and not var:
            continue
        value = (int(coef) if coef else 1) * (k if var else 1)
        total += -value if sign == "-" else value
    return total


def test_the_default_pools_table_is_the_code() -> None:
    """docs/guide/inventory.md, "Default address pools": the first and last fabric of each role
    in the table have the pools inventory/defaults.py gives them, and the next none."""
    from fabgen.inventory.defaults import PLACES, default_pools

    text = (ROOT / "docs" / "guide" / "inventory.md").read_text()
    table = text[text.index("### Default address pools"):]
    for role, (_, _, most) in PLACES.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| {role} "))
        assert f"-{most}th" in row or f"-{most}rd" in row, row
        for k in (0, most - 1):
            pools = default_pools(role, k)
            assert pools is not None
            for name in ("links", "hosts", "loopbacks"):
                octet, width = pools[name].split(".")[1], pools[name].split("/")[1]
                formula = re.findall(r"10\.\{([^}]+)\}\.0\.0/(\d+)", row)
                values = [(_octet(f, k), w) for f, w in formula]
                assert (int(octet), width) in values, (role, k, name, row)
        assert default_pools(role, most) is None
