"""fabgen verify's expected state: the ANTA catalog of EOS fabrics, FRR's JSON of SONiC and Cumulus.

ANTA's own catalog loader reads every catalog (and refuses a broken one); ANTA's own
VerifyRunningConfig runs the catalog's configuration rules against the rendered config (in the
`show running-config | json` tree ANTA reads) and fails on a changed PFC priority or MTU;
tests/test_avd.py runs the same rules on AVD's config of the same switches, a running config
fabgen did not write (no EOS runs here to print its own). FRR's
JSON from real daemons is tested in tests/test_emulate.py (`--save-state`, then `verify --frr`);
here the reader's refusals and the comparison on state built from the plan."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from conftest import GOLDEN, IN_CI
from fabgen.rendered import read as rendered
from fabgen.verify import frr, state
from fabgen.verify.cabling import Verdict

try:
    from anta.catalog import AntaCatalog
    HAVE_ANTA = True
except ImportError:  # pragma: no cover - the test extras install it
    HAVE_ANTA = False
if IN_CI and not HAVE_ANTA:
    raise RuntimeError("CI must have ANTA (`make test` installs the test extras)")
needs_anta = pytest.mark.skipif(not HAVE_ANTA, reason="needs PyPI anta")

EOS_CASES = sorted({p.parts[len(GOLDEN.parts)] for p in GOLDEN.glob("*/*/switches/*.cfg")})
def _routed(case: str, fabric: str) -> bool:
    """A fabric whose FRR state verify holds to the plan (not a northsouth one nor the GPU overlay:
    EVPN, not compared yet)."""
    f = json.loads((GOLDEN / case / "report.json").read_text())["fabrics"][fabric]
    return f.get("role") not in ("northsouth", "oob") and (f.get("addressing") or {}).get("host_addressing") != "evpn"


FRR_CASES = sorted({p.parts[len(GOLDEN.parts)] for p in [*GOLDEN.glob("*/*/switches/*.nvue.yaml"),
                                                         *GOLDEN.glob("*/*/switches/*/config_db.json")]
                    if _routed(*p.parts[len(GOLDEN.parts):len(GOLDEN.parts) + 2])})


def fabgen(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_cases_exist() -> None:
    assert "roce-3tier" in EOS_CASES and "spectrumx-1su" in FRR_CASES and "fattree-2to1" in FRR_CASES


# ANTA ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def catalogs(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    out = {}
    base = tmp_path_factory.mktemp("anta")
    for case in EOS_CASES:
        path = base / f"{case}.yml"
        res = fabgen("verify", GOLDEN / case, "--anta-catalog", path)
        assert res.returncode == 0, res.stderr
        out[case] = (path, res.stderr)
    return out


@needs_anta
@pytest.mark.parametrize("case", EOS_CASES)
def test_anta_loads_every_catalog_with_each_switch_planned(catalogs: dict, case: str) -> None:
    path, said = catalogs[case]
    cat = AntaCatalog.parse(str(path))
    assert f"wrote {path}: {len(cat.tests)} ANTA tests" in said
    files = rendered.read_render(GOLDEN / case)
    expects = [e for e in state.expected(state.fabrics(files)) if e.platform == "eos"]
    by_device: dict[str, dict[str, object]] = {}
    for t in cat.tests:
        (device,) = t.inputs.filters.tags
        by_device.setdefault(device, {})[t.test.__name__] = t.inputs
    assert set(by_device) == {e.device for e in expects}
    for e in expects:
        tests = by_device[e.device]
        # every planned session, from addresses.csv: the rows whose peer is this switch, of a switch
        # (with its ASN) or of a node that runs BGP (its frr.conf)
        rows = [r for name, data in files.items() if name.endswith("/addresses.csv")
                for r in _csv(data) if r["peer_device"] == e.device
                and (r["asn"] or f"hosts/{r['device']}/frr.conf" in files)]
        sessions = getattr(tests.get("VerifyBGPPeerSession"), "bgp_peers", [])
        assert len(sessions) == len(rows) == len(e.peers)
        entries = getattr(tests.get("VerifyBGPRouteECMP"), "route_entries", [])
        others = {r["address"] for r in _csv(files[f"{e.fabric}/addresses.csv"]) if r["role"] == "leaf"
                  and not r["peer_device"] and r["address"].endswith("/32") and r["device"] != e.device}
        if e.role == "leaf" and others:  # another leaf's loopback comes over each of this leaf's spine uplinks
            uplinks = sum(1 for r in _csv(files[f"{e.fabric}/cabling.csv"])
                          if r["tier"] == "leaf-spine" and e.device in (r["a_device"], r["z_device"]))
            widths = {str(r.prefix): r.ecmp_count for r in entries if str(r.prefix) in others}
            assert uplinks and widths.keys() == others and set(widths.values()) == {uplinks}, (e.device, uplinks)
        assert all(r.ecmp_count >= 1 for r in entries)
        assert {n.port for n in getattr(tests.get("VerifyLLDPNeighbors"), "neighbors", [])} == set(e.links)
        sections = [rule.section for rule in tests["VerifyRunningConfig"].rules]
        assert any(s and s[0].startswith("qos profile") for s in sections), "the lossless QoS is checked"


def _csv(data: bytes) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(data.decode())))


def eos_json(config: str) -> dict:
    """A rendered EOS config as `show running-config | json` gives it: `{"cmds": {line: null, or
    {"cmds": ...} for a section}}` (the tree ANTA's VerifyRunningConfig walks)."""
    root: dict = {"cmds": {}}
    stack: list[tuple[int, dict]] = [(-1, root)]
    for line in config.splitlines():
        if not line.strip() or line.strip() == "!":
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 3
        while stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1]
        if parent.get("cmds") is None:
            parent["cmds"] = {}
        node: dict = {"cmds": None}
        parent["cmds"][line.strip()] = node
        stack.append((depth, node))

    def done(n: dict) -> dict | None:
        return None if n["cmds"] is None else {"cmds": {k: done(v) for k, v in n["cmds"].items()}}
    return done(root) or {"cmds": {}}


@needs_anta
def test_anta_runs_the_config_rules_on_the_rendered_config(catalogs: dict) -> None:
    from anta.device import AsyncEOSDevice
    from anta.tests.configuration import VerifyRunningConfig

    cat = AntaCatalog.parse(str(catalogs["roce-3tier"][0]))
    device = "eth-su001-leaf1"
    (rules,) = [t.inputs for t in cat.tests if t.test is VerifyRunningConfig and device in t.inputs.filters.tags]
    config = (GOLDEN / "roce-3tier" / "eth" / "switches" / f"{device}.cfg").read_text()
    dev = AsyncEOSDevice(host="192.0.2.1", username="u", password="p", name=device)  # never connected

    def run(text: str) -> tuple[str, list[str]]:
        res = asyncio.run(VerifyRunningConfig(dev, inputs=rules, eos_data=[eos_json(text)]).test())
        return res.result, list(res.messages)
    assert run(config) == ("success", [])
    changed = {
        "PFC on another priority": config.replace("priority-flow-control priority 3 no-drop",
                                                  "priority-flow-control priority 4 no-drop"),
        "a port's MTU": config.replace("   mtu 9214\n", "   mtu 1500\n", 1),
        "the ECN thresholds": config.replace("random-detect ecn minimum-threshold 200000",
                                             "random-detect ecn minimum-threshold 300000", 1),
    }
    for why, text in changed.items():
        assert text != config, why
        result, messages = run(text)
        assert result == "failure" and messages, why


@needs_anta
def test_anta_refuses_a_broken_catalog(catalogs: dict, tmp_path: Path) -> None:
    text = catalogs["roce-3tier"][0].read_text()
    for why, broken in {"a width that is no number": text.replace("ecmp_count: 32", "ecmp_count: many", 1),
                        "a test ANTA has not": text.replace("VerifyBGPRouteECMP:", "VerifyBGPRouteECMPs:", 1),
                        "an input the test has not": text.replace("require_fqdn: false", "require_fqdns: false", 1),
                        }.items():
        assert broken != text, why
        path = tmp_path / "broken.yml"
        path.write_text(broken)
        with pytest.raises(ValidationError):  # pydantic's, which ANTA's catalog raises for each
            AntaCatalog.parse(str(path))


def test_anta_catalog_bad_requests_are_exit_2(tmp_path: Path) -> None:
    assert fabgen("verify", GOLDEN / "spectrumx-1su", "--anta-catalog", tmp_path / "c.yml").returncode == 2
    inside = fabgen("verify", GOLDEN / "roce-3tier", "--anta-catalog", GOLDEN / "roce-3tier" / "c.yml")
    assert inside.returncode == 2 and "an input of this command" in inside.stderr
    assert not (GOLDEN / "roce-3tier" / "c.yml").exists()
    link = tmp_path / "link.yml"
    link.symlink_to(tmp_path / "elsewhere.yml")
    assert fabgen("verify", GOLDEN / "roce-3tier", "--anta-catalog", link).returncode == 2
    assert not (tmp_path / "elsewhere.yml").exists()
    assert fabgen("verify", GOLDEN / "roce-3tier").returncode == 2  # no evidence, no catalog


# FRR ----------------------------------------------------------------------------------------------

def planned_state(expects: list[state.Expected]) -> dict[str, dict]:
    """FRR JSON as a switch built to plan would print it (the shapes of FRR 8-10's vtysh)."""
    out = {}
    for e in expects:
        peers = {k: {"remoteAs": asn, "state": "Established", "hostname": far} for k, (far, asn) in e.peers.items()}
        routes = {p: [{"prefix": p, "protocol": "bgp", "selected": True, "installed": True,
                       "nexthops": [{"active": True, "fib": True} for _ in range(w)]}]
                  for p, w in e.widths.items() if w}
        bfd = [{"peer": k, "status": "up"} if "." in k else {"interface": k, "peer": "fe80::1", "status": "up"}
               for k in sorted(e.bfd)]
        out[e.device] = {"bgp": {"as": e.asn, "peers": peers}, "routes": routes, "bfd": bfd}
    return out


@pytest.mark.parametrize("case", FRR_CASES)
def test_frr_state_built_to_plan_passes_and_each_change_is_named(case: str) -> None:
    files = rendered.read_render(GOLDEN / case)
    expects = [e for e in state.expected(state.fabrics(files)) if e.platform in frr.FRR_PLATFORMS]
    good = planned_state(expects)
    v = Verdict()
    frr.compare(expects, good, v)
    assert not v.findings and v.states == len(expects)
    e = next(x for x in expects if x.peers and any(w > 1 for w in x.widths.values()))
    bad = json.loads(json.dumps(good))
    key = sorted(e.peers)[0]
    bad[e.device]["bgp"]["peers"][key]["state"] = "Idle"
    prefix = next(p for p, w in e.widths.items() if w > 1)
    bad[e.device]["routes"][prefix][0]["nexthops"].pop()
    bad[e.device]["bgp"]["peers"]["192.0.2.99"] = {"remoteAs": 1, "state": "Established"}
    del bad[expects[-1].device]
    v = Verdict()
    frr.compare(expects, bad, v)
    got = {(f.kind, f.device, f.port) for f in v.findings}
    assert got == {("bgp-session", e.device, key), ("ecmp-width", e.device, prefix),
                   ("bgp-unplanned", e.device, "192.0.2.99"), ("no-state", expects[-1].device, "")}
    assert {f.kind for f in v.issues} == {"bgp-session", "ecmp-width", "bgp-unplanned"}


def test_frr_evidence_that_is_not_frr_json_is_exit_2(tmp_path: Path) -> None:
    render = GOLDEN / "spectrumx-1su"
    cases = {
        "sx-spine01.bgp.json": "{not json",
        "sx-spine01.routes.json": '{"10.0.0.0/31": {"protocol": "bgp"}}',
        "sx-spine01.bfd.json": '{"peers": []}',
        "nobody.bgp.json": '{"peers": {}}',
        "sx-spine01.lldp.json": "{}",
    }
    for name, text in cases.items():
        d = tmp_path / name.replace(".", "-")
        d.mkdir()
        (d / name).write_text(text)
        res = fabgen("verify", render, "--frr", d)
        assert res.returncode == 2 and name in res.stderr and "Traceback" not in res.stderr, (name, res.stderr)
    assert fabgen("verify", GOLDEN / "roce-3tier", "--frr", tmp_path).returncode == 2  # EOS: no FRR switch


def test_a_northsouth_render_says_its_state_is_not_compared(tmp_path: Path) -> None:
    """verify --frr on a render whose Ethernet fabric is northsouth: exit 2 saying why, not a
    misleading 'no Cumulus switch'."""
    (tmp_path / "frr").mkdir()
    res = fabgen("verify", GOLDEN / "gb300-northsouth", "--frr", tmp_path / "frr")
    assert res.returncode == 2 and "northsouth (EVPN multihoming)" in res.stderr, res.stderr
