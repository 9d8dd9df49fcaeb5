"""The YAML files fabgen writes pass yamllint with the configuration fabgen ships
(fabgen/formats/yamllint.yaml: yamllint's default rules, two relaxed, each with its reason),
and that configuration still refuses what yamllint is for: a tab, a duplicate key, a `yes` meant
as a string, a file mixing sequence styles, a missing document start, trailing spaces, a long
line of words.

The goldens are linted one file of each kind per render, not every file: yamllint reads 60 kB a
second (PyYAML's pure-Python scanner, twice), and the goldens hold 10 MB of YAML, 3 minutes on one
core. The files of one kind (a render's leaves, the netplans of one node group) are written by the
same code from the same shapes and differ in values only; the values' spelling is held for any data
by the property test of yamlout.dump below, so each kind's first and largest file stand for it.
`yamllint --strict -c <config> OUT` lints every file of a render (docs/reference/outputs.md)."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from test_yamlout import data, keys
from yamllint import linter
from yamllint.config import YamlLintConfig

from conftest import GOLDEN, example_cases
from fabgen.formats import yamlout

CONFIG = resources.files("fabgen.formats") / "yamllint.yaml"
YAML_SUFFIXES = (".yaml", ".yml")


@cache
def _config() -> YamlLintConfig:
    return YamlLintConfig(CONFIG.read_text())


def _problems(text: str, where: str = "") -> list[str]:
    """yamllint's findings of every level (warnings too: `yamllint --strict` fails on them)."""
    return [f"{where}:{p.line}:{p.column}: [{p.level}] {p.desc} ({p.rule or 'syntax'})"
            for p in linter.run(text, _config())]


def _rules(text: str) -> set[str]:
    return {p.rule or "syntax" for p in linter.run(text, _config())}


def _listed(render: Path) -> dict[str, dict[str, object]]:
    """The render's YAML files as its manifest lists them: path -> entry (bytes, sha256)."""
    files = json.loads((render / "manifest.json").read_text())["files"]
    return {f["path"]: f for f in files if f["path"].endswith(YAML_SUFFIXES)}


def _kind(path: str) -> str:
    """A file's kind: its path with every number as N (hosts/gpuN/netplan.yaml, sx/switches/sx-suN-leafN...)."""
    return re.sub(r"[0-9]+", "N", path)


def _sample(listed: dict[str, dict[str, object]]) -> list[str]:
    """The first and the largest file of each kind."""
    kinds: dict[str, list[str]] = {}
    for path in sorted(listed):
        kinds.setdefault(_kind(path), []).append(path)
    picked = set()
    for paths in kinds.values():
        picked |= {paths[0], max(paths, key=lambda p: (listed[p]["bytes"], p))}
    return sorted(picked)


def test_every_yaml_file_of_every_golden_is_counted() -> None:
    """Each golden's YAML files on disk are exactly those its manifest lists, and every one is of
    a kind the lint below samples."""
    total = 0
    for case in example_cases():
        render = GOLDEN / case
        on_disk = {p.relative_to(render).as_posix() for p in render.rglob("*") if p.suffix in YAML_SUFFIXES}
        listed = _listed(render)
        assert on_disk == set(listed), (case, sorted(on_disk ^ set(listed))[:10])
        assert on_disk, case
        assert {_kind(p) for p in _sample(listed)} == {_kind(p) for p in on_disk}
        total += len(on_disk)
    assert total >= len(example_cases()) * 10, total


def lint_renders(root: Path, cases: list[str]) -> tuple[int, list[str]]:
    """(files linted, findings) of every kind of YAML file of each render root/<case>, each distinct
    text once (the playbooks are the same in every render)."""
    seen: set[object] = set()
    problems: list[str] = []
    linted = 0
    for case in cases:
        listed = _listed(root / case)
        for path in _sample(listed):
            if listed[path]["sha256"] in seen:
                continue
            seen.add(listed[path]["sha256"])
            problems += _problems((root / case / path).read_text(), f"{root.name}/{case}/{path}")
            linted += 1
    return linted, problems


def test_the_goldens_pass_the_shipped_configuration() -> None:
    """Every kind of YAML file of every golden, without a finding of any level."""
    linted, problems = lint_renders(GOLDEN, example_cases())
    assert linted > len(example_cases()) * 5, linted
    assert not problems, f"{len(problems)} findings:\n" + "\n".join(problems[:40])


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.dictionaries(keys, data, min_size=1, max_size=5), st.lists(data, min_size=1, max_size=5)))
def test_whatever_yamlout_writes_passes(value) -> None:
    r"""fabgen's YAML writer, after a document start, passes for any data it is given: quoted
    truthy words and numbers, no trailing spaces, sequences in one style, braces without spaces.
    Every rule but the line's length: yamlout escapes each character outside printable ASCII
    (`\u00e9`, `\U00010000`), up to ten columns for one, so drawn text of a few such characters
    and spaces passes 160 columns; the test below holds the length for the text fabgen writes."""
    text = yamlout.DOCUMENT_START + yamlout.dump(value)
    assert [p for p in _problems(text) if "(line-length)" not in p] == [], text


# The text fabgen's inputs can hold: names, descriptions, banners and secrets' references are
# printable ASCII (validation refuses control characters and the patterns take ASCII alone).
ascii_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)
ascii_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), ascii_text,
                          st.sampled_from(["on", "off", "yes", "1.5", "0x1f", "10.0.0.1/31", "a: b", "#c", "- d",
                                           "{{ x }}", "0644", " lead", "trail ", "'q'", '"d"']))
ascii_keys = st.one_of(ascii_text.filter(bool).map(lambda t: t[:12]), st.sampled_from(["on", "3", "2x", "y"]))
ascii_data = st.recursive(ascii_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                                 st.dictionaries(ascii_keys, inner, max_size=4)),
                          max_leaves=25)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.dictionaries(ascii_keys, ascii_data, min_size=1, max_size=5),
                 st.lists(ascii_data, min_size=1, max_size=5)))
def test_whatever_yamlout_writes_of_printable_text_passes_whole(value) -> None:
    """For printable ASCII, every rule, the line's length too."""
    text = yamlout.DOCUMENT_START + yamlout.dump(value)
    assert _problems(text) == [], text


def test_the_length_rule_still_sees_an_escaped_line() -> None:
    """Why the first property leaves the length out: twenty escaped characters and a space are
    one line of over 160 columns, which yamllint refuses."""
    text = yamlout.DOCUMENT_START + yamlout.dump({"k": "\U00010000" * 20 + " x"})
    assert any("(line-length)" in p for p in _problems(text)), text


@pytest.mark.parametrize("text", [
    "# a head comment of a few words" * 10 + "\n",
    "# " + "x" * 200 + " y\n",
])
def test_a_head_comment_is_wrapped_within_the_width(text: str) -> None:
    """yamlout.comment breaks a head at spaces within 80 columns; a word longer than a line stands alone."""
    lines = yamlout.comment(text[2:-1]).splitlines()
    assert " ".join(line[2:] for line in lines) == text[2:-1] and all(line.startswith("# ") for line in lines)
    assert all(len(line) <= yamlout.COMMENT_WIDTH or " " not in line[2:] for line in lines), lines
    assert _problems(yamlout.comment(text[2:-1]) + "---\na: 1\n") == []


LONG_WORDS = " ".join(["word"] * 40)


@pytest.mark.parametrize("text, rule", [
    ("---\nnetwork:\n\tversion: 2\n", "syntax"),  # a tab where indentation is meant
    ("---\nmtu: 9000\nmtu: 1500\n", "key-duplicates"),
    ("---\nstate: yes\n", "truthy"),  # NVUE's `on`/`off` are strings: written quoted, never bare
    ("---\niburst: on\n", "truthy"),
    ("---\naddresses:\n- 10.0.0.1/31\nroutes:\n  - to: 10.0.0.0/8\n", "indentation"),  # both styles in one file
    ("---\nnetwork:\n   version: 2\n  renderer: networkd\n", "syntax"),
    ("network:\n  version: 2\n", "document-start"),
    ("---\nmtu: 9000 \n", "trailing-spaces"),
    (f"---\ndescription: \"{LONG_WORDS} {LONG_WORDS}\"\n", "line-length"),
    ("---\na: 1\n\n\n\nb: 2\n", "empty-lines"),
    ("---\na: { x: 1 }\n", "braces"),
])
def test_the_configuration_refuses(text: str, rule: str) -> None:
    assert rule in _rules(text), (text, _problems(text))


def test_the_relaxations_take_only_what_their_reasons_name() -> None:
    """A secret's reference 134 characters long, a block sequence at its key's column in a whole
    file, a 200-character hostlist: accepted; their neighbours are not (above)."""
    lookup = "{{ lookup('ansible.builtin.env', '" + "V" * 64 + "') }}"
    assert _problems(f"---\n- set:\n    system:\n      aaa:\n        user:\n          netops:\n"
                     f"            hashed-password: \"{lookup}\"\n") == []
    assert _problems("---\naddresses:\n- 10.0.0.1/31\nroutes:\n- to: 10.0.0.0/8\n") == []
    assert _problems("---\naddresses:\n  - 10.0.0.1/31\nroutes:\n  - to: 10.0.0.0/8\n") == []
    hostlist = ",".join(f"rack{r:02d}-gpu[001-018]" for r in range(1, 12))
    assert len(hostlist) > 160 and _problems(f"---\n- block: b1\n  nodes: {hostlist}\n") == []


def test_every_relaxation_says_why() -> None:
    """Each rule the configuration sets apart from extending the defaults is preceded by its reason."""
    lines = CONFIG.read_text().splitlines()
    conf = yaml.safe_load(CONFIG.read_text())
    assert conf["extends"] == "default"
    for rule, options in conf["rules"].items():
        for option in options:
            at = next(n for n, line in enumerate(lines) if line.strip().startswith(f"{option}:")
                      and n > lines.index(f"  {rule}:"))
            assert lines[at - 1].strip().startswith("#"), (rule, option)


def test_the_anta_catalog_passes() -> None:
    """fabgen verify --anta-catalog writes YAML too (PyYAML's writer, not yamlout)."""
    from fabgen.verify.run import anta_catalog

    text, switches, tests = anta_catalog(GOLDEN / "roce-2node")
    assert switches and tests
    assert _problems(text, "anta.yml") == []
