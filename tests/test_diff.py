"""fabgen diff on real changes: the review reads like an engineer's and exits as documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import INVENTORIES, git
from fabgen.cli import app, main
from fabgen.pipeline import render_to


def fabgen(*args: str, capsys) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def variant(tmp_path: Path, case: str, name: str, old: str, new: str, count: int = 1) -> Path:
    text = (INVENTORIES / f"{case}.yaml").read_text()
    assert text.count(old) >= 1
    path = tmp_path / f"{name}.yaml"
    path.write_text(text.replace(old, new, count))
    return path


def section(out: str, heading: str) -> list[str]:
    m = re.search(rf"^{re.escape(heading)} \((\d+)\):\n((?:  .*\n)*)", out, re.M)
    assert m, f"no section {heading!r} in:\n{out[:2000]}"
    return [line[2:] for line in m.group(2).splitlines()]


def test_growing_by_one_scalable_unit(tmp_path: Path, capsys) -> None:
    new = variant(tmp_path, "superpod-4su", "five", "count: 127", "count: 159")
    code, out, _ = fabgen("diff", str(INVENTORIES / "superpod-4su.yaml"), str(new), "--no-files", "--exit-code",
                          capsys=capsys)
    assert code == 1
    # a fifth unit: 8 leaves, 32 nodes; 32 spines instead of 16 (40 leaves x 32 uplinks), one
    # hostlist line per role with its count
    assert section(out, "Devices added") == ["compute-spine[17-32] (16)", "compute-su05-leaf[1-8] (8)",
                                             "dgx[128-159] (32)"]
    assert "Devices added (56):" in out
    # before/after sizes per role: the spine count doubling is what a reviewer must see first
    assert section(out, "Sizes changed") == [
        "compute: leaf switches: 32 -> 40", "compute: spine switches: 16 -> 32", "compute: nodes: 127 -> 159",
        "compute: gpus: 1016 -> 1272", "compute: endpoints: 1016 -> 1272", "compute: scalable_units: 4 -> 5",
        "compute: links leaf-spine: 1024 -> 1280", "compute: links node-leaf: 1016 -> 1272"]
    recabled = section(out, "Links re-cabled")
    assert recabled[0].startswith("compute: compute-su01-leaf1 IB1/17/2: compute-spine01 IB1/1/2 -> ")
    assert "Devices removed" not in out


def test_changing_an_ecn_threshold(tmp_path: Path, capsys) -> None:
    new = variant(tmp_path, "roce-3tier", "ecn", "min_threshold_kbytes: 200", "min_threshold_kbytes: 300")
    code, out, _ = fabgen("diff", str(INVENTORIES / "roce-3tier.yaml"), str(new), "--exit-code", capsys=capsys)
    assert code == 1
    # one inventory edit, one line, under the inventory's own key (not its bytes twin as well)
    assert section(out, "Fabric intent changed") == ["eth: ethernet.qos.ecn.min_threshold_kbytes: 200 -> 300"]
    assert section(out, "Devices changed") == ["eth-core[0001-0008] (8)", "eth-pod01-spine[01-08] (8)",
                                               "eth-su001-leaf[1-8] (8)"]
    assert "Devices changed (24):" in out
    # the 24 identical hunks fold into one, shown with the first switch's real diff
    assert out.count("== eth/switches/<device>.cfg: the same change on 24: "
                     "eth-core[0001-0008],eth-pod01-spine[01-08],eth-su001-leaf[1-8]\n") == 1
    assert out.count("-      random-detect ecn minimum-threshold 200000") == 1
    for absent in ("Devices added", "Links re-cabled", "ASNs changed", "Addresses changed", "Sizes changed"):
        assert absent not in out
    assert "-      random-detect ecn minimum-threshold 200000 bytes" in out
    assert "+      random-detect ecn minimum-threshold 300000 bytes" in out


def test_adding_a_partition(tmp_path: Path, capsys) -> None:
    text = (INVENTORIES / "ib-3tier.yaml").read_text() + (
        "        - name: tenant-b\n          pkey: 0x0a02\n          node_groups: [h100]\n")
    new = tmp_path / "part.yaml"
    new.write_text(text)
    code, out, _ = fabgen("diff", str(INVENTORIES / "ib-3tier.yaml"), str(new), "--format", "markdown",
                          capsys=capsys)
    assert code == 0  # differences alone do not fail without --exit-code
    assert "### Fabric intent changed (3)" in out
    assert '`ib: infiniband.partitions.tenant-b.pkey: null -> "0x0a02"`' in out
    assert "<code>ib/infiniband/partitions.conf</code>" in out and "+tenant-b=0x0a02, ipoib" in out
    assert "Devices changed" not in out


def test_address_and_asn_changes_from_rendered_directories(tmp_path: Path, capsys) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    render_to(INVENTORIES / "fattree-2to1.yaml", old)
    render_to(variant(tmp_path, "fattree-2to1", "asn", "oversubscription: 2",
                      "oversubscription: 2\n    ethernet: {asn: {leaf: 65101}, pools: {loopbacks: 10.254.0.0/24}}"),
              new)
    code, out, _ = fabgen("diff", str(old), str(new), "--no-files", "--exit-code", capsys=capsys)
    assert code == 1
    asns = section(out, "ASNs changed")
    leaves = json.loads((old / "report.json").read_text())["fabrics"]["fabric"]["switches"]["leaf"]
    assert asns[0] == "fabric-leaf001: 4200010000 -> 65101" and len(asns) == leaves > 1
    assert "fabric-leaf001 Loopback0: 10.255.0.1/32 -> 10.254.0.1/32" in section(out, "Addresses changed")
    code, out, _ = fabgen("diff", str(old), str(old), "--exit-code", capsys=capsys)
    assert code == 0 and out.startswith("no differences")


def test_bad_side_is_a_located_error(tmp_path: Path, capsys) -> None:
    bad = variant(tmp_path, "roce-2node", "bad", "switch_model: arista-7060x5", "switch_model: arista-7060")
    code, _, err = fabgen("diff", str(INVENTORIES / "roce-2node.yaml"), str(bad), capsys=capsys)
    assert code == 2
    assert re.search(r"bad\.yaml:\d+:\d+: fabrics\[0\]\.switch_model: unknown model", err)
    code, _, err = fabgen("diff", str(tmp_path / "missing"), str(bad), capsys=capsys)
    assert code == 2 and "no such inventory or directory" in err


def test_a_side_that_is_not_a_render_is_named(tmp_path: Path, capsys) -> None:
    """Empty directory, other CSV columns, a corrupt report.json, non-UTF-8 bytes: one line naming
    the file, exit 2, never a traceback."""
    good = tmp_path / "good"
    render_to(INVENTORIES / "roce-2node.yaml", good)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = fabgen("diff", str(good), str(empty), capsys=capsys)
    assert code == 2 and "empty: not a fabgen render (no manifest.json)" in err and "Traceback" not in err
    for name, mutate, message in (
            ("columns", lambda d: (d / "roce" / "cabling.csv").write_text("a,b\n1,2\n"), "columns a,b, not fabgen's"),
            ("report", lambda d: (d / "report.json").write_text("{broken"), "report.json: not what fabgen writes"),
            ("bytes", lambda d: (d / "hosts" / "gpu01" / "netplan.yaml").write_bytes(b"\xff\xfe"), "not UTF-8 text")):
        bad = tmp_path / name
        render_to(INVENTORIES / "roce-2node.yaml", bad)
        mutate(bad)
        code, _, err = fabgen("diff", str(good), str(bad), capsys=capsys)
        assert code == 2 and message in err and str(bad) in err and "Traceback" not in err, err


def test_folding_keeps_different_changes_apart() -> None:
    """Folding abstracts the owner's name and addresses, nothing else: a change that differs in
    any other way stays its own section."""
    from fabgen.review.compare import Review, fold

    def cfg(name: str, addr: str, mtu: int) -> bytes:
        return f"hostname {name}\ninterface Ethernet1\n   ip address {addr}/31\n   mtu {mtu}\n".encode()

    rv = Review(files=[
        ("f/switches/f-leaf1.cfg", cfg("f-leaf1", "10.0.0.0", 9000), cfg("f-leaf1", "10.0.0.0", 9100)),
        ("f/switches/f-leaf2.cfg", cfg("f-leaf2", "10.0.0.2", 9000), cfg("f-leaf2", "10.0.0.2", 9100)),
        ("f/switches/f-leaf3.cfg", cfg("f-leaf3", "10.0.0.4", 9000), cfg("f-leaf3", "10.0.0.4", 9200)),
        ("f/cabling.csv", b"a\n", b"b\n"),
    ])
    folds = fold(rv)
    assert [(f.kind, f.owners) for f in folds] == [
        ("f/switches/<device>.cfg", ["f-leaf1", "f-leaf2"]),  # same change at different addresses
        ("f/switches/<device>.cfg", ["f-leaf3"]),  # another MTU: its own section
        ("f/cabling.csv", [])]
    assert "+   mtu 9100" in folds[0].body and "f-leaf1" in folds[0].body


def test_a_fabric_wide_qos_change_fits_one_comment(tmp_path: Path, capsys) -> None:
    """256 nodes, one ECN key: the markdown names both values and folds 36 switches into one section."""
    big = variant(tmp_path, "fattree-2to1", "big", "count: 40\n    hostname: \"b200-{n:02d}\"",
                  "count: 256\n    hostname: \"b200-{n:03d}\"")
    big.write_text(big.read_text() + "    ethernet:\n      qos:\n        ecn: {min_threshold_kbytes: 150}\n")
    new = tmp_path / "new.yaml"
    new.write_text(big.read_text().replace("min_threshold_kbytes: 150", "min_threshold_kbytes: 300"))
    code, out, _ = fabgen("diff", str(big), str(new), "--format", "markdown", capsys=capsys)
    assert code == 0 and len(out) < 65_536
    assert "`fabric: ethernet.qos.ecn.min_threshold_kbytes: 150 -> 300`" in out
    assert out.count("<details>") == 1 and "the same change on 36: fabric-leaf[001-026],fabric-spine[01-10]" in out
    assert "&lt;device&gt;" in out  # GitHub would swallow a bare <device> as a tag
    assert "Truncated" not in out


def test_a_large_review_is_truncated_and_written_whole(tmp_path: Path, capsys) -> None:
    """Growth re-cables 1,023 links: the comment stays under GitHub's limit, names what it left
    out, and --output holds every section."""
    new = variant(tmp_path, "superpod-4su", "five", "count: 127", "count: 159")
    whole = tmp_path / "review.md"
    code, out, _ = fabgen("diff", str(INVENTORIES / "superpod-4su.yaml"), str(new), "--format", "markdown",
                          "--output", str(whole), capsys=capsys)
    assert code == 0 and len(out) <= 65_536
    full = whole.read_text()
    assert len(full) > 65_536 and "Truncated" not in full
    assert "**Truncated** to fit one comment" in out and "- `compute/infiniband/topology.net`" in out
    shown = re.findall(r"<summary><code>(.*?)</code>", out)
    assert shown and set(shown) < set(re.findall(r"<summary><code>(.*?)</code>", full))
    code, _, err = fabgen("diff", str(INVENTORIES / "superpod-4su.yaml"), str(new), "--output", str(tmp_path),
                          capsys=capsys)
    assert code == 2 and "not a regular file" in err


def test_stat_counts_changed_files_per_kind(tmp_path: Path, capsys) -> None:
    new = variant(tmp_path, "roce-3tier", "ecn", "min_threshold_kbytes: 200", "min_threshold_kbytes: 300")
    code, out, _ = fabgen("diff", str(INVENTORIES / "roce-3tier.yaml"), str(new), "--stat", capsys=capsys)
    assert code == 0 and "@@" not in out
    stat = {line.split()[0]: line.split()[1:] for line in out.split("Files changed: ")[1].splitlines()[1:]}
    assert stat["eth/switches/<device>.cfg"] == ["24", "files", "+24", "-24"]
    # an inventory review renders only what it shows: no manifest.json (it hashes every file)
    assert stat == {"eth/switches/<device>.cfg": ["24", "files", "+24", "-24"],
                    "report.json": ["1", "file", "+2", "-2"]}
    # the review of the two renders counts the same, and the manifest beside them
    render_to(INVENTORIES / "roce-3tier.yaml", tmp_path / "a")
    render_to(new, tmp_path / "b")
    code, out, _ = fabgen("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--stat", capsys=capsys)
    folders = {line.split()[0]: line.split()[1:] for line in out.split("Files changed: ")[1].splitlines()[1:]}
    assert folders == {**stat, "manifest.json": ["1", "file", "+26", "-26"]}


def _apply(a: list[str], diff: str) -> list[str]:
    """Apply a unified diff to `a`, checking every context line and each hunk's line counts."""
    lines = diff.splitlines(keepends=True)
    out: list[str] = []
    pos, i = 0, 2 if lines else 0
    while i < len(lines):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", lines[i])
        assert m, lines[i]
        count_a, count_b = int(m.group(2) or 1), int(m.group(4) or 1)
        start = int(m.group(1)) - (1 if count_a else 0)
        out += a[pos:start]
        pos, i, seen_a, seen_b = start, i + 1, 0, 0
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, body = lines[i][0], lines[i][1:]
            if tag in " -":
                assert a[pos] == body, (pos, a[pos], body)
                pos, seen_a = pos + 1, seen_a + 1
            if tag in " +":
                out.append(body)
                seen_b += 1
            i += 1
        assert (seen_a, seen_b) == (count_a, count_b)
    return out + a[pos:]


@pytest.mark.parametrize("large_window", [2000, 0], ids=["difflib", "one-pass"])
def test_windowed_diffs_patch_old_into_new(large_window: int, monkeypatch) -> None:
    """The diff runs on the lines between the common head and tail (speed at 32k GPUs), by difflib
    or, above LARGE_WINDOW lines, in one pass; whatever the edits, the hunks it prints turn the old
    file into the new one, headers included."""
    import random

    from fabgen.review import unified as module
    from fabgen.review.unified import _unified

    monkeypatch.setattr(module, "LARGE_WINDOW", large_window)
    rng = random.Random(7)
    for _ in range(5000):
        a = [f"l{rng.randint(0, 8)}\n" for _ in range(rng.randint(0, 60))]
        b = list(a)
        for _ in range(rng.randint(0, 5)):
            op = rng.choice("idc")
            if op == "i":
                b.insert(rng.randint(0, len(b)), f"x{rng.randint(0, 3)}\n")
            elif b and op == "d":
                del b[rng.randrange(len(b))]
            elif b:
                b[rng.randrange(len(b))] = f"y{rng.randint(0, 3)}\n"
        diff = _unified(a, b, "p")
        assert (diff == "") == (a == b)
        assert _apply(a, diff) == b
    # rows inserted in several places (growth): the one pass prints exactly difflib's hunks
    a = [f"row{i}\n" for i in range(300)]
    b = a[:50] + ["new1\n", "new2\n"] + a[50:200] + ["new3\n"] + a[200:] + ["new4\n"]
    monkeypatch.setattr(module, "LARGE_WINDOW", 0)
    one_pass = _unified(a, b, "p")
    monkeypatch.setattr(module, "LARGE_WINDOW", 10**9)
    assert one_pass == _unified(a, b, "p")
    # the applier itself rejects a hunk whose line numbers are off
    broken = _unified(["a\n"] * 10 + ["b\n"], ["a\n"] * 10 + ["c\n"], "p").replace("@@ -8,", "@@ -7,")
    with pytest.raises(AssertionError):
        _apply(["a\n"] * 10 + ["b\n"], broken)


def test_the_review_reports_its_progress(tmp_path: Path) -> None:
    """The same stage display as render (shown on a terminal only): both sides' stages are named."""
    from fabgen.review.compare import load_sides

    new = variant(tmp_path, "roce-2node", "grown", "count: 2", "count: 3")
    stages: list[str] = []
    old_files, new_files = load_sides(INVENTORIES / "roce-2node.yaml", new, stages.append)
    assert old_files != new_files
    assert any(s.startswith("grown.yaml: build") for s in stages), stages
    assert any("roce-2node.yaml" in s for s in stages), stages
    render_to(INVENTORIES / "roce-2node.yaml", tmp_path / "a")
    stages.clear()
    load_sides(tmp_path / "a", tmp_path / "a", stages.append)
    assert stages == [f"reading {tmp_path / 'a'}"] * 2


@pytest.mark.parametrize("bad_side", ["old", "new"])
def test_a_bad_inventory_on_either_side_is_a_located_error(tmp_path: Path, capsys, bad_side: str) -> None:
    """The old side renders in a forked child: its failure is reported as the parent's own located
    message, exit 2, and the child is gone (the test process's children are those it had before:
    servers other tests started, such as NetBox's, are its children too)."""
    import os

    def children() -> set[str]:
        return {c for t in Path(f"/proc/{os.getpid()}/task").iterdir()
                for c in (t / "children").read_text().split()}

    before = children()
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncluster: x\nnode_groups: []\nfabrics: bad\n")
    good = INVENTORIES / "roce-2node.yaml"
    sides = (bad, good) if bad_side == "old" else (good, bad)
    code, _, err = fabgen("diff", str(sides[0]), str(sides[1]), capsys=capsys)
    assert code == 2 and "Traceback" not in err
    assert "bad.yaml:4:10: fabrics: must be a list" in err and err.count("bad.yaml:4:10") == 1
    assert children() <= before  # no child left behind


ECN = "    ethernet:\n      qos:\n        ecn: {min_threshold_kbytes: 300}\n"
# (example, what changes, old text, new text): each reviewed from the two inventories and from
# their two renders; the reviews must agree
CHANGES = [
    ("roce-3tier", "ecn", "min_threshold_kbytes: 200", "min_threshold_kbytes: 300"),
    ("fattree-2to1", "ecn-sonic", "oversubscription: 2\n", "oversubscription: 2\n" + ECN),
    ("spectrumx-1su", "ecn-nvue", "planned_nodes: 256\n", "planned_nodes: 256\n" + ECN),
    ("spectrumx-1su", "grow-nvue", "count: 64", "count: 96"),
    ("superpod-4su", "grow-ib", "count: 127", "count: 159"),
    ("fattree-2to1", "asn", "oversubscription: 2\n", "oversubscription: 2\n    ethernet: {asn: {leaf: 65101}}\n"),
    ("roce-3tier", "grow-eos", "count: 32", "count: 48"),
    ("fattree-2to1", "release", "oversubscription: 2\n", "oversubscription: 2\n    platform_version: \"202411\"\n"),
    ("ib-3tier", "tiers", "tiers: 3", "tiers: auto"),
    ("roce-2node", "kind", "kind: roce\n    platform: eos\n    topology: fat-tree\n    switch_model: arista-7060x5",
     "kind: spectrum-x\n    platform: nvue\n    topology: fat-tree\n    switch_model: sn5600"),
]


@pytest.mark.parametrize("case,name,old,new", CHANGES, ids=[c[1] for c in CHANGES])
def test_an_inventory_review_says_what_the_review_of_the_renders_says(tmp_path: Path, capsys, case: str,
                                                                      name: str, old: str, new: str) -> None:
    """Two inventories are rendered only as far as the review needs (diffsides.py: one switch per
    group of switches that change alike, unchanged targets not at all). The review must be the one
    of the full renders: the same summary, files and line counts (but manifest.json, which only the
    renders have), and for every changed file the same lines added and removed. Only the folding
    may be coarser: switches whose change is the same but whose diffs differ in a context line
    (a peer's name, say) share one section."""
    before = INVENTORIES / f"{case}.yaml"
    after = variant(tmp_path, case, name, old, new)
    render_to(before, tmp_path / "a")
    render_to(after, tmp_path / "b")

    def both(*args: str) -> tuple[str, str]:
        _, inv, _ = fabgen("diff", str(before), str(after), *args, capsys=capsys)
        _, dirs, _ = fabgen("diff", str(tmp_path / "a"), str(tmp_path / "b"), *args, capsys=capsys)
        return inv, dirs.replace(str(tmp_path / "a"), str(before)).replace(str(tmp_path / "b"), str(after))

    for args in (["--stat"], ["--no-files"]):
        inv, dirs = both(*args)
        assert inv == _without_manifest(dirs), (args, inv[:3000], dirs[:3000])
    inv, dirs = both("--max-lines", "0")
    head = inv.split("\n== ", 1)[0]
    assert head == _without_manifest(dirs.split("\n== ", 1)[0])
    assert _changes(inv) == {p: c for p, c in _changes(dirs).items() if p != "manifest.json"}


def _changes(review: str) -> dict[str, tuple[str, ...]]:
    """Every file a review's sections name, with the lines its diff adds and removes, the owner's
    name and addresses abstracted (a section shows the first owner's diff for all)."""
    from fabgen.formats.hostlist import expand
    from fabgen.rendered.paths import ADDRESS as _ADDRESS

    out: dict[str, tuple[str, ...]] = {}
    for section in review.split("\n== ")[1:]:
        heading, _, body = section.partition("\n")
        lines = tuple(sorted(line for line in body.splitlines()
                             if line[:1] in "+-" and not line.startswith(("+++", "---"))))
        m = re.match(r"^(.*)<device>(.*): the same change on \d+: (.*)$", heading)
        if not m:
            out[heading] = lines
            continue
        owners = expand(m.group(3))
        first = re.search(r"^--- a/" + re.escape(m.group(1)) + r"(.+?)" + re.escape(m.group(2)) + "$", body, re.M)
        shown = first.group(1) if first else owners[0]
        for owner in owners:
            out[f"{m.group(1)}{owner}{m.group(2)}"] = tuple(
                _ADDRESS.sub("<address>", line.replace(shown, "<device>")) for line in lines)
    for path, lines in list(out.items()):
        owner = re.search(r"/switches/([^/.]+)", path)
        if owner:
            out[path] = tuple(sorted(_ADDRESS.sub("<address>", line.replace(owner.group(1), "<device>"))
                                     for line in lines))
    return out


def _without_manifest(review: str) -> str:
    """The review of two renders as an inventory review writes it: no manifest.json."""
    out = []
    for line in review.split("\n"):
        m = re.match(r"^(\*\*Files changed:\*\* |Files changed: )(\d+)$", line)
        if m:
            line = f"{m.group(1)}{int(m.group(2)) - 1}"
        if re.match(r"^\s*manifest\.json\s+1 file", line):
            continue
        out.append(line)
    return "\n".join(out)


def test_a_fabric_wide_change_renders_one_switch_per_group(tmp_path: Path) -> None:
    from fabgen.review.compare import load_sides
    from fabgen.review.sides import StandIn

    new = variant(tmp_path, "roce-3tier", "ecn", "min_threshold_kbytes: 200", "min_threshold_kbytes: 300")
    old_files, new_files = load_sides(INVENTORIES / "roce-3tier.yaml", new)
    configs = [p for p in new_files if p.endswith(".cfg")]
    rendered = [p for p in configs if not isinstance(new_files[p], StandIn)]
    # one per shape of config: leaves, spines and cores, as their address digits fall
    assert len(configs) == 24 and 1 <= len(rendered) <= 12, rendered
    assert all(new_files[p].of in rendered for p in configs if p not in rendered)
    assert "slurm/topology.conf" not in new_files  # a target whose config is the same: not rendered
    assert "manifest.json" not in new_files and "manifest.json" not in old_files


def test_without_a_second_core_the_review_is_the_same(tmp_path: Path, capsys, monkeypatch) -> None:
    new = variant(tmp_path, "roce-3tier", "ecn", "min_threshold_kbytes: 200", "min_threshold_kbytes: 300")
    _, two, _ = fabgen("diff", str(INVENTORIES / "roce-3tier.yaml"), str(new), capsys=capsys)
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    _, one, _ = fabgen("diff", str(INVENTORIES / "roce-3tier.yaml"), str(new), capsys=capsys)
    assert one == two and "the same change on 24" in one


def test_a_whole_cluster_review_names_each_change_by_its_network(tmp_path: Path, capsys) -> None:
    """Two networks of one cluster change at once (the storage class and the out-of-band VLAN):
    the review names each change with the fabric's role, and nothing else moves."""
    text = (INVENTORIES / "superpod-cluster.yaml").read_text()
    new = tmp_path / "new.yaml"
    changed = text.replace("roce_dscp: 24", "roce_dscp: 22").replace("    scalable_unit: 32             # nodes per "
                                                                      "access switch", "    oob_vlan: 20\n"
                                                                      "    scalable_unit: 32             # nodes per "
                                                                      "access switch")
    assert changed.count("oob_vlan: 20") == 1 and "roce_dscp: 22" in changed
    new.write_text(changed)
    code, out, _ = fabgen("diff", str(INVENTORIES / "superpod-cluster.yaml"), str(new), "--exit-code", capsys=capsys)
    assert code == 1
    intent = section(out, "Fabric intent changed")
    assert "storagenet (storage): ethernet.qos.roce_dscp: 24 -> 22" in intent
    assert "ipminet (oob): oob_vlan: 10 -> 20" in intent
    assert not any(line.startswith(("compute:", "internalnet")) for line in intent)
    devices = " ".join(section(out, "Devices changed"))
    assert "storagenet" in devices and "ipminet-compute-access" in devices
    assert not any(d.startswith("internalnet") for d in devices.split())  # only the oob's switches named after it
    for absent in ("Devices added", "Links re-cabled", "Sizes changed"):
        assert absent not in out


def test_a_routed_out_of_band_change_is_its_key_and_a_rack_more_no_intent(tmp_path: Path, capsys) -> None:
    """report.json's out-of-band facts (targets/report.py `_oob`): the DHCP server the pair relays to
    reads as oob_routed.dhcp_server; a second rack's trays (node_ports' count) are sizes, not intent."""
    text = (INVENTORIES / "era-2-4-5-800.yaml").read_text()
    old = "dhcp_server: 192.168.33.200"
    assert text.count(old) == 1 and text.count("    count: 18 ") == 1
    new = tmp_path / "new.yaml"
    new.write_text(text.replace(old, "dhcp_server: 192.168.33.201").replace("    count: 18 ", "    count: 36 "))
    code, out, _ = fabgen("diff", str(INVENTORIES / "era-2-4-5-800.yaml"), str(new), "--no-files", "--exit-code",
                          capsys=capsys)
    assert code == 1
    intent = section(out, "Fabric intent changed")
    assert intent == ['oob (oob): oob_routed.dhcp_server: "192.168.33.200" -> "192.168.33.201"'], intent


def test_diff_against_a_git_revision_reads_its_side_files(tmp_path: Path) -> None:
    """`fabgen diff --base REF inventory.yaml` in a pull request: the inventory names a guid_map
    beside it, and REF's copy of both is compared with the working tree's. A GUID changed in the
    map shows in the review; nothing is added to the repository; a bad or option-like revision is
    one line, exit 2."""
    from fabgen.pipeline import run

    repo = tmp_path / "repo"
    (repo / "site").mkdir(parents=True)
    text = (INVENTORIES / "ib-3tier.yaml").read_text().replace("      qos: true\n",
                                                               "      qos: true\n      guid_map: guids.csv\n")
    names = run(INVENTORIES / "ib-3tier.yaml").files["ib/infiniband/node-name-map"].decode()
    rows = ["device,port,guid"]
    for line in names.splitlines():
        if line.startswith("0x"):
            guid, name = line.split(None, 1)
            device, _, port = name.strip('"').partition(" ")
            rows.append(f"{device},{port or '0'},0x0002c9{guid[-10:]}")
    (repo / "site" / "guids.csv").write_text("\n".join(rows) + "\n")
    (repo / "site" / "ib.yaml").write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    refs_before = sorted(p.name for p in (repo / ".git").rglob("*") if p.is_file() and "objects" not in p.parts)
    changed = rows[1].rsplit(",", 1)[0] + ",0x0002c9ffffffffff"  # one device's GUID, as after a swap
    (repo / "site" / "guids.csv").write_text("\n".join([rows[0], changed, *rows[2:]]) + "\n")
    res = CliRunner().invoke(app, ["diff", "--base", "main", str(repo / "site" / "ib.yaml")])
    assert res.exit_code == 0, res.output
    assert "ib.yaml@main" in res.output and "0x0002c9ffffffffff" in res.output.lower(), res.output[-2000:]
    same = CliRunner().invoke(app, ["diff", "--base", "HEAD", str(repo / "site" / "ib.yaml"), "--exit-code"])
    assert same.exit_code == 1  # the map differs from HEAD's
    assert sorted(p.name for p in (repo / ".git").rglob("*") if p.is_file() and "objects" not in p.parts) == \
        refs_before
    for ref, words in (("nope", "no such revision"), ("--output=x", "not a git revision name"),
                       ("main..HEAD", "not a git revision name")):
        bad = CliRunner().invoke(app, ["diff", "--base", ref, str(repo / "site" / "ib.yaml")])
        assert bad.exit_code == 2 and words in bad.output and "Traceback" not in bad.output, (ref, bad.output)


def test_a_platform_change_is_named_first(tmp_path: Path, capsys) -> None:
    """Arista EOS to Spectrum-X: the first line is the verdict naming the design change, and the
    first section lists kind, platform, switch model, topology and tiers before any size or device."""
    text = (INVENTORIES / "roce-2node.yaml").read_text()
    new = tmp_path / "sx.yaml"
    new.write_text(text.replace("kind: roce", "kind: spectrum-x").replace("platform: eos", "platform: nvue")
                   .replace("switch_model: arista-7060x5", "switch_model: sn5600")
                   .replace("topology: fat-tree", "topology: rail-optimized"))
    code, out, _ = fabgen("diff", str(INVENTORIES / "roce-2node.yaml"), str(new), "--no-files", capsys=capsys)
    assert code == 0
    first = out.splitlines()[0]
    assert first.endswith(": changes the design of roce (kind, platform, switch_model, topology, tiers); "
                          "re-cables 16 links; removes 1 device"), first
    assert out.split("\n\n")[1].splitlines()[0] == "Fabric design changed (5):"
    assert section(out, "Fabric design changed") == [
        "roce: kind: roce -> spectrum-x", "roce: platform: eos -> nvue", "roce: switch_model: arista-7060x5 -> sn5600",
        "roce: topology: fat-tree -> rail-optimized", "roce: tiers: 1 -> 2"]
    assert "tiers" not in "\n".join(section(out, "Sizes changed"))  # said once, as design


def test_splitting_into_planes_is_one_design_change(tmp_path: Path, capsys) -> None:
    """Two planes instead of one renames the fabric's planes (sx -> sx-plane1, sx-plane2) but the
    review names the inventory fabric once, with its plane count."""
    new = variant(tmp_path, "b300-spectrumx-2plane", "one", "planes: 2", "planes: 1")
    code, out, _ = fabgen("diff", str(new), str(INVENTORIES / "b300-spectrumx-2plane.yaml"), "--no-files",
                          capsys=capsys)
    assert code == 0
    assert "sx: planes: 1 -> 2" in section(out, "Fabric design changed")
    assert "changes the design of sx (planes" in out.splitlines()[0]


def test_unplanned_growth_has_a_verdict_and_says_how_to_avoid_it(tmp_path: Path, capsys) -> None:
    new = variant(tmp_path, "superpod-4su", "five", "count: 127", "count: 159")
    _, out, _ = fabgen("diff", str(INVENTORIES / "superpod-4su.yaml"), str(new), "--no-files", capsys=capsys)
    first = out.splitlines()[0]
    recabled = len(section(out, "Links re-cabled")) - 1  # the list is cut at 50 with a count line
    m = re.search(r": re-cables ([\d,]+) links.*: set planned_nodes on compute to grow without it$", first)
    assert m, first
    assert int(m.group(1).replace(",", "")) > recabled
    assert f"Links re-cabled ({m.group(1).replace(',', '')})" in out


def test_planned_growth_verdict_says_nothing_existing_changes(tmp_path: Path, capsys) -> None:
    text = (INVENTORIES / "superpod-4su.yaml").read_text()
    assert "planned_nodes" not in text
    planned = text.replace("    topology: rail-optimized", "    topology: rail-optimized\n    planned_nodes: 160", 1)
    assert planned != text
    (tmp_path / "a.yaml").write_text(planned)
    (tmp_path / "b.yaml").write_text(planned.replace("count: 127", "count: 159"))
    _, out, _ = fabgen("diff", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "--no-files", capsys=capsys)
    assert re.search(r": adds [\d,]+ devices and [\d,]+ links and alters nothing that exists$", out.splitlines()[0])


def test_a_long_text_review_prints_its_summary_and_counts_what_it_left_out(tmp_path: Path, capsys) -> None:
    """Over --max-lines the terminal gets the verdict, the summary and the per-kind counts; the file
    diffs go to --output whole, and the terminal says where they went."""
    new = variant(tmp_path, "superpod-4su", "five", "count: 127", "count: 159")
    old = str(INVENTORIES / "superpod-4su.yaml")
    _, whole, _ = fabgen("diff", old, str(new), "--max-lines", "0", capsys=capsys)
    _, cut, _ = fabgen("diff", old, str(new), "--max-lines", "300", capsys=capsys)
    assert len(whole.splitlines()) > 1000 and len(cut.splitlines()) < 300
    m = re.search(r"^File diffs not shown: ([\d,]+) lines in ([\d,]+) sections, more than --max-lines 300 "
                  r"\(--output FILE writes them, --max-lines 0 prints them\)$", cut, re.M)
    assert m and int(m.group(2).replace(",", "")) == whole.count("\n== ")
    assert cut.split("\nFiles changed:")[0] == whole.split("\nFiles changed:")[0]
    _, shown, _ = fabgen("diff", old, str(new), "--max-lines", "300", "--output", str(tmp_path / "r.txt"),
                         capsys=capsys)
    assert f"(written to {tmp_path / 'r.txt'})" in shown
    assert (tmp_path / "r.txt").read_text() == whole


def test_a_review_in_a_pipe_shows_its_progress_on_stderr(tmp_path: Path, capsys, monkeypatch) -> None:
    """In a pipe the stages of a review that takes a while are lines on stderr (here from the
    start; by default from 2 s on, so a quick review or a bad input's message stays one line)."""
    from fabgen import cli

    monkeypatch.setattr(cli._Progress, "PLAIN_AFTER", 0.0)
    new = variant(tmp_path, "roce-2node", "more", "count: 2", "count: 3")
    _, _, err = fabgen("diff", str(INVENTORIES / "roce-2node.yaml"), str(new), capsys=capsys)
    stages = [line for line in err.splitlines() if line.startswith("fabgen: ")]
    assert any(line.endswith("s  comparing") for line in stages), err
    assert all(re.match(r"^fabgen: +\d+\.\d s  \S", line) for line in stages), err


def test_a_render_older_than_a_design_key_shows_no_change_of_it() -> None:
    """An older render's report.json lacks platform_version: that is not a design change."""
    from fabgen.review.compare import compare as review

    old = {"report.json": json.dumps({"fabrics": {"f": {"kind": "roce", "tiers": 2}}}).encode()}
    new = {"report.json": json.dumps({"fabrics": {"f": {"kind": "roce", "tiers": 2,
                                                       "platform_version": "4.33"}}}).encode()}
    assert review(old, new).design == []
    newer = {"report.json": json.dumps({"fabrics": {"f": {"kind": "roce", "tiers": 3}}}).encode()}
    assert review(old, newer).design == [("f", "tiers", 2, 3)]
