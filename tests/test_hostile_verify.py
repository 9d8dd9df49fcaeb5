"""Hostile evidence, fourth round: what `fabgen verify` reads from switches is untrusted input.

LLDP (lldpctl, EOS, NVUE), ibnetdiscover and FRR's JSON of the wrong shape, nested 100,000 deep,
of 62 MiB of tiny objects or of more neighbours than a fabric has: exit 2 and one line naming the
file and the key (or line). 200,000 unplanned ports: a verdict within the timeout (each row is
matched through an index, not a scan of the plan). Names with newlines, control characters, table
pipes, HTML and Markdown links: the report keeps its lines, cells and markup. Every case runs the
real command line in a process of its own, bounded by a timeout, never a timed assertion."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GOLDEN
from fabgen.verify.untrusted import MAX_DEPTH, MAX_LINES, MAX_ROWS, MAX_VALUES

TIMEOUT = 60  # the bound for every case: a hang or a quadratic walk is a failure, not a slow pass
ETH = GOLDEN / "roce-2node"  # roce-leaf01, gpu01 and gpu02: 16 cables
FRR = GOLDEN / "spectrumx-1su"  # Cumulus (NVUE) switches: FRR's state


def fabgen(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "COLUMNS": "200"})


def refused(res: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 2, one line on stderr holding each of `words`, no traceback."""
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1, res.stderr[-3000:]
    for w in words:
        assert w in res.stderr, (w, res.stderr)


def deep(n: int) -> str:
    return "[" * n + "]" * n


# 1. Every shape verify reads is checked: a located line, never a traceback -------------------------

LLDP_CASES = {
    "eos-neighbours-a-list": ('{"lldpNeighbors": []}', ['at ["lldpNeighbors"]', "a list where an object belongs"]),
    "eos-neighbour-a-list": ('{"lldpNeighbors": {"Ethernet1/1": {"lldpNeighborInfo": [[]]}}}',
                             ['at ["lldpNeighbors"]["Ethernet1/1"]["lldpNeighborInfo"][0]', "a list where an object"]),
    "eos-interface-a-list": ('{"lldpNeighbors": {"Ethernet1/1": {"lldpNeighborInfo": [{"systemName": "gpu01", '
                             '"neighborInterfaceInfo": []}]}}}',
                             ['["neighborInterfaceInfo"]', "a list where an object"]),
    "eos-name-a-number": ('{"lldpNeighbors": {"Ethernet1/1": {"lldpNeighborInfo": [{"systemName": 7}]}}}',
                          ['["systemName"]', "a number where a string belongs"]),
    "eos-info-an-object": ('{"lldpNeighbors": {"Ethernet1/1": {"lldpNeighborInfo": {"systemName": "x"}}}}',
                           ['["lldpNeighborInfo"]', "an object where a list belongs"]),
    "nvue-neighbour-a-list": ('{"swp1": {"lldp": {"neighbor": []}}}', ['at ["swp1"]["lldp"]["neighbor"]', "a list"]),
    "nvue-chassis-a-list": ('{"swp1": {"lldp": {"neighbor": {"gpu01": {"chassis": [], "port": {}}}}}}',
                            ['["gpu01"]["chassis"]', "a list where an object belongs"]),
    "nvue-interface-a-list": ('{"swp1": {"lldp": {}}, "swp2": []}', ['at ["swp2"]', "a list where an object"]),
    "nvue-port-a-number": ('{"swp1": {"lldp": {"neighbor": {"x": {"port": {"name": 3}}}}}}',
                           ['["port"]["name"]', "a number where a string belongs"]),
    "lldpctl-port-a-number": ('{"lldp": {"interface": {"eth0": {"chassis": {}, "port": 5}}}}',
                              ['at ["lldp"]["interface"]["eth0"]["port"]', "a number where an object belongs"]),
    "lldpctl-id-lists": ('{"lldp": {"interface": {"eth0": {"chassis": {"x": {}}, "port": {"id": [[[]]]}}}}}',
                         ['["port"]["id"][0]', "a list where a string belongs"]),
    "lldpctl-lldp-a-string": ('{"lldp": "x"}', ['at ["lldp"]', "a string where an object belongs"]),
    "lldpctl-interface-numbers": ('{"lldp": {"interface": [1]}}', ['at ["lldp"]["interface"][0]', "a number"]),
    "lldpctl-json0-name-an-object": ('{"lldp": [{"interface": [{"name": "eth0", "chassis": [{"name": [{"value": '
                                     '{}}]}]}]}]}', ['["chassis"][0]["name"][0]["value"]', "an object where a string"]),
    "deep-100000": (deep(100_000), [f"deeper than {MAX_DEPTH} levels"]),
    "deep-in-lldp": ('{"lldp": ' + deep(100_000) + "}", [f"deeper than {MAX_DEPTH} levels"]),
    "deep-40": ('{"lldp": {"interface": {"eth0": {"x": ' + deep(40) + "}}}}", [f"deeper than {MAX_DEPTH} levels"]),
    "not-json-located": ('{\n  "lldp": ,\n}', ["roce-leaf01.json:2:", "not JSON"]),
    "digits": ('{"lldp": ' + "1" * 5000 + "}", []),
}


@pytest.mark.parametrize("case", sorted(LLDP_CASES))
def test_lldp_evidence_of_the_wrong_shape_is_one_located_line(case: str, tmp_path: Path) -> None:
    text, words = LLDP_CASES[case]
    (tmp_path / "roce-leaf01.json").write_text(text)
    refused(fabgen("verify", ETH, "--lldp", tmp_path), "roce-leaf01.json", *words)


FRR_CASES = {
    "routes-nexthops-a-number": ("routes", '{"10.0.0.0/31": [{"protocol": "bgp", "selected": true, "nexthops": 5}]}',
                                 ['at ["10.0.0.0/31"][0]["nexthops"]', "a number where a list belongs"]),
    "routes-nexthops-an-object": ("routes", '{"10.0.0.0/31": [{"protocol": "bgp", "nexthops": {"a": 1}}]}',
                                  ['["nexthops"]', "an object where a list belongs"]),
    "routes-nexthop-a-list": ("routes", '{"10.0.0.0/31": [{"nexthops": [[]]}]}', ['["nexthops"][0]', "a list"]),
    "routes-a-list": ("routes", "[]", ["at the top", "a list where an object belongs"]),
    "bgp-peers-a-list": ("bgp", '{"peers": []}', ['at ["peers"]', "a list where an object belongs"]),
    "bgp-state-a-list": ("bgp", '{"peers": {"10.0.0.1": {"state": []}}}',
                         ['at ["peers"]["10.0.0.1"]["state"]', "a list where a string belongs"]),
    "bgp-remote-as-an-object": ("bgp", '{"peers": {"swp1": {"remoteAs": {}}}}', ['["remoteAs"]', "an AS number"]),
    "bgp-as-a-list": ("bgp", '{"as": [65000], "peers": {}}', ['at ["as"]', "a list where an AS number"]),
    "bgp-hostname-a-number": ("bgp", '{"peers": {"swp1": {"hostname": 1}}}', ['["hostname"]', "a number"]),
    "bgp-ipv4unicast": ("bgp", '{"ipv4Unicast": {"peers": {"x": []}}}', ['at ["ipv4Unicast"]["peers"]["x"]']),
    "bgp-deep": ("bgp", deep(100_000), [f"deeper than {MAX_DEPTH} levels"]),
    "bfd-peer-a-number": ("bfd", '[{"peer": 5, "status": "up"}]', ['at [0]["peer"]', "a number where a string"]),
    "bfd-status-a-list": ("bfd", '[{"peer": "10.0.0.1", "status": ["up"]}]', ['[0]["status"]', "a list"]),
    "bfd-an-object": ("bfd", '{"peers": []}', ["at the top", "an object where a list belongs"]),
}


@pytest.mark.parametrize("case", sorted(FRR_CASES))
def test_frr_state_of_the_wrong_shape_is_one_located_line(case: str, tmp_path: Path) -> None:
    kind, text, words = FRR_CASES[case]
    name = f"sx-spine01.{kind}.json"
    (tmp_path / name).write_text(text)
    refused(fabgen("verify", FRR, "--frr", tmp_path), name, *words)


def test_ibnetdiscover_of_the_wrong_shape_is_one_located_line(tmp_path: Path) -> None:
    bad = tmp_path / "ibnet.txt"
    bad.write_text('Switch 36 "S-0001" # "ib-leaf1" base port 0 lid 1 lmc 0\n[1] garbage\n')
    refused(fabgen("verify", ETH, "--ibnetdiscover", bad), "ibnet.txt:2:", "not a port line")


# 1b. Bounded in size and count --------------------------------------------------------------------

def test_62_mib_of_tiny_objects_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """60 MiB of `{},` parsed is 20 million dicts and 1.5-3.5 GiB (this ended in MemoryError): the
    count is refused first, naming the bound."""
    unit, n = '{"p":{}},', 62 * 1024 * 1024 // 9
    with open(tmp_path / "roce-leaf01.json", "w") as f:
        f.write('{"lldp": {"interface": [' + unit * (n - 1) + '{"p":{}}]}}')
    refused(fabgen("verify", ETH, "--lldp", tmp_path), "roce-leaf01.json", f"{MAX_VALUES:,}")


def test_a_file_over_the_size_bound_is_refused(tmp_path: Path) -> None:
    with open(tmp_path / "roce-leaf01.json", "wb") as f:
        f.truncate(64 * 1024 * 1024 + 1)  # sparse: nothing written
    refused(fabgen("verify", ETH, "--lldp", tmp_path), "roce-leaf01.json", "67,108,864")


def test_more_neighbours_than_any_fabric_is_refused_at_the_line(tmp_path: Path) -> None:
    """ibnetdiscover's port lines, MAX_ROWS + 1 of the shortest (16 bytes: 32 MB, within the size
    bound): refused at the first row past the bound (line 1 is the switch's)."""
    (tmp_path / "ibnet.txt").write_text('Switch 36 "S-1" # "x"\n' + '[1] ""[1] # ""\n' * (MAX_ROWS + 1))
    refused(fabgen("verify", ETH, "--ibnetdiscover", tmp_path / "ibnet.txt"), f"ibnet.txt:{MAX_ROWS + 2}:",
            f"{MAX_ROWS:,}")


def test_more_neighbours_than_any_fabric_over_several_files_is_refused(tmp_path: Path) -> None:
    """Two files of half the bound and one row each: the second is named."""
    half = MAX_ROWS // 2 + 1
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text('Switch 36 "S-1" # "x"\n' + '[1] ""[1] # ""\n' * half)
    refused(fabgen("verify", ETH, "--ibnetdiscover", tmp_path / "a.txt", "--ibnetdiscover", tmp_path / "b.txt"),
            "b.txt:", f"{MAX_ROWS:,}")


def test_a_text_of_more_lines_than_any_evidence_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ibnet.txt").write_text('Switch 36 "S-1" # "x"\n' + "x\n" * MAX_LINES)
    refused(fabgen("verify", ETH, "--ibnetdiscover", tmp_path / "ibnet.txt"), "ibnet.txt", f"{MAX_LINES:,} one file")


# 2. Linear in the evidence ------------------------------------------------------------------------

def test_a_million_blank_lines_are_read_once(tmp_path: Path) -> None:
    """The test for SONiC's header was `^\\s*LocalPort` across lines: from each blank line it ran to the
    end of the text (40,000 took 3 s; a million, hours)."""
    (tmp_path / "roce-leaf01.txt").write_text("\n" * 1_000_000 + "x")
    refused(fabgen("verify", ETH, "--lldp", tmp_path), "roce-leaf01.txt", "not the output of")


def test_a_sonic_ruler_of_a_million_columns_cuts_each_row_five_times(tmp_path: Path) -> None:
    ruler = "- " * 500_000
    rows = "Ethernet0    gpu01           mlx5_0             R             x\n" * 2_000
    (tmp_path / "roce-leaf01.txt").write_text(f"LocalPort    RemoteDevice    RemotePortID\n{ruler}\n{rows}")
    res = fabgen("verify", ETH, "--lldp", tmp_path)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]


def _last_device(render: Path) -> str:
    """The device whose planned ends come last: a scan of the plan for each row would walk them all."""
    fabrics = list(json.loads((render / "report.json").read_text())["fabrics"])
    rows = list(csv.DictReader((render / fabrics[-1] / "cabling.csv").open()))
    return rows[-1]["z_device"]


def test_200000_unplanned_ports_are_a_verdict_within_the_timeout(tmp_path: Path) -> None:
    """Each unplanned port found its fabric by a scan of every planned end: 200,000 ports against
    the ~5,700 ends of b300-cluster took 98 s; through an index, seconds."""
    render = GOLDEN / "b300-cluster"
    device = _last_device(render)
    items = [{f"swp{1000 + i}": {"chassis": {f"stranger{i}": {}}, "port": {"id": {"type": "ifname", "value": "eth0"}}}}
             for i in range(200_000)]
    (tmp_path / f"{device}.json").write_text(json.dumps({"lldp": {"interface": items}}))
    res = fabgen("verify", render, "--lldp", tmp_path, "--format", "json")
    assert res.returncode == 1, res.stderr[-2000:]
    doc = json.loads(res.stdout)
    assert sum(1 for f in doc["findings"] if f["kind"] == "unplanned") == 200_000


# 3. Evidence text is data -------------------------------------------------------------------------

EVIL = {  # what a name may hold, and the same name without the characters that would do harm
    "peer": "<script>alert(1)</script>\nfabgen verify: 0 finding(s)\r\x1b[2K",
    "port": "[x](http://evil) | a\tb\u2028c\x7f\u202eevil",
    "local": "Ethernet40/1\nmiswired (9):",
    "far": "stranger|*em* `code` <b>x</b>",
}


def _tame(text: str) -> str:
    return re.sub(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2028<>|\[\]()*`]", "", text)


def _leaf_evidence(folder: Path, names: dict[str, str]) -> Path:
    """roce-leaf01's lldpctl JSON as planned, except Ethernet1/1 sees `peer` on `port` (miswired,
    a repair) and the unplanned `local` sees `far` (unplanned)."""
    items = []
    for r in csv.DictReader((ETH / "roce" / "cabling.csv").open()):
        peer, pid = (names["peer"], names["port"]) if r["z_port"] == "Ethernet1/1" else (r["a_device"], r["a_port"])
        items.append({r["z_port"]: {"chassis": {peer: {}}, "port": {"id": {"type": "ifname", "value": pid},
                                                                    "descr": pid}}})
    items.append({names["local"]: {"chassis": {"name": names["far"]}, "port": {"id": names["port"]}}})
    folder.mkdir()
    (folder / "roce-leaf01.json").write_text(json.dumps({"lldp": {"interface": items}}))
    return folder


def _reports(render: Path, *args: object) -> dict[str, str]:
    out = {}
    for fmt in ("text", "markdown", "json"):
        res = fabgen("verify", render, *args, "--format", fmt)
        assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
        out[fmt] = res.stdout
    return out


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_names_from_lldp_forge_no_line_cell_link_or_tag(tmp_path: Path) -> None:
    evil = _reports(ETH, "--lldp", _leaf_evidence(tmp_path / "evil", EVIL))
    tame = _reports(ETH, "--lldp", _leaf_evidence(tmp_path / "tame", {k: _tame(v) for k, v in EVIL.items()}))
    for fmt in ("text", "markdown"):
        assert evil[fmt].count("\n") == tame[fmt].count("\n"), evil[fmt]
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2028\u2029]", evil[fmt]), evil[fmt]
    assert "miswired (1):" in evil["text"] and "unplanned (1):" in evil["text"] and "repairs (1):" in evil["text"]
    md = evil["markdown"]
    table = md.split("### Findings\n\n")[1].split("\n\n")[0].splitlines()
    rows = [table[0], *table[2:]]  # the header and the findings, without the ruler
    assert len(rows) == 3 and all(_unescaped_pipes(line) == _unescaped_pipes(rows[0]) for line in rows), rows
    assert "<script" not in md and "<b>" not in md and "](" not in md and "\\|" in md
    doc = json.loads(evil["json"])  # valid, and the names as the evidence gave them
    found = {f["kind"]: f for f in doc["findings"]}
    assert found["miswired"]["found"] == f"{EVIL['peer']} {EVIL['port']}"
    assert found["unplanned"]["port"] == EVIL["local"]


def test_the_markdown_ticket_renders_without_links_or_html(tmp_path: Path) -> None:
    """Read by a CommonMark renderer with GFM tables: every findings row has six cells, no <a>, no tag
    from the evidence."""
    markdown_it = pytest.importorskip("markdown_it")
    md = _reports(ETH, "--lldp", _leaf_evidence(tmp_path / "evil", EVIL))["markdown"]
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    assert "<a " not in html and "<script" not in html and "<b>" not in html and "<em>" not in html, html
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    assert all(row.count("<td>") == 6 for row in body.split("</tr>")[:-1]), body
    assert "&lt;script&gt;" in html and "[x](http://evil)" in html  # shown as the text it is


def _frr_evidence(folder: Path, hostname: str, state: str) -> Path:
    """sx-spine01's BGP summary with one unplanned peer, `hostname` and `state` from the evidence."""
    folder.mkdir()
    (folder / "sx-spine01.bgp.json").write_text(json.dumps(
        {"peers": {"192.0.2.99": {"remoteAs": 1, "state": state, "hostname": hostname}}}))
    return folder


def test_an_frr_peer_hostname_forges_no_line(tmp_path: Path) -> None:
    host, state = "evil\nbfd (0):\n  forged", "Idle|<i>x</i>\r"
    evil = _reports(FRR, "--frr", _frr_evidence(tmp_path / "evil", host, state))
    tame = _reports(FRR, "--frr", _frr_evidence(tmp_path / "tame", _tame(host), _tame(state)))
    for fmt in ("text", "markdown"):
        assert evil[fmt].count("\n") == tame[fmt].count("\n"), evil[fmt]
    assert "<i>" not in evil["markdown"] and "Idle\\|" in evil["markdown"]
    unplanned = [f for f in json.loads(evil["json"])["findings"] if f["kind"] == "bgp-unplanned"]
    assert [f["found"] for f in unplanned] == [f"{state} with {host}"]


def test_an_adapter_description_forges_no_line_and_names_no_port_it_is_not(tmp_path: Path) -> None:
    """ibnetdiscover's `<host> <rdma>` from a node that writes its own description: an RDMA name
    is kept only as a device name can be (63 characters, no control or space); a description
    with a terminal escape, a bell and 5,000 characters is no device name: the finding names the
    host's port number, and nothing of it reaches the report."""
    render = GOLDEN / "gb300-northsouth"
    text = (render / "compute" / "infiniband" / "topology.net").read_text()
    hostile = "mlx5_9\x1b[2K\x07fabgen verify: 0 finding(s)" + "A" * 5000  # \r or \x0b would end the line: refused
    for rdma, kept in (("mlx5_" + "9" * 58, True), (hostile, False)):
        built = tmp_path / "ibnetdiscover.txt"
        built.write_text(text.replace('"gb001 mlx5_0"', f'"gb001 {rdma}"'))
        res = fabgen("verify", render, "--ibnetdiscover", built, "--format", "json")
        assert res.returncode == 1, res.stderr[-2000:]
        found = {f["found"] for f in json.loads(res.stdout)["findings"] if f["device"] == "compute-su01-leaf1"}
        assert found == ({f"gb001 {rdma}"} if kept else {"gb001 1"}), found  # no device name: the port number
        out = fabgen("verify", render, "--ibnetdiscover", built).stdout
        assert "\x1b" not in out and "\x07" not in out
        assert all(line.startswith(("fabgen verify:", "  ", "note:", "fabrics", "miswired", "repairs", "not-"))
                   or not line for line in out.splitlines()), out[:3000]
