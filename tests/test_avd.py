"""fabgen's EOS configs against Arista AVD's for the same design, line by line.

pyavd 6.4.0 (Arista's AVD as a Python package) lives in a virtualenv of its own, so its pins
never touch the test one: `make test` builds it (`$(AVD_VENV)/.installed`, the `bench-avd`
extra, fabgen installed editable beside pyavd). For each small inventory, fabgen renders the
switch configs here; then benchmarks/avd.py, run by that virtualenv's Python, translates the same
allocated fabric into AVD's l3ls / l3ls-evpn inputs, has AVD validate them and generate every
switch's EOS config, and compares the two: per switch the same routed ports, BGP neighbours,
Ethernet segments, ASN and QoS profile (`avd.parity`), and every line of every section equal under
the same enclosing lines but for the differences `avd.ACCEPTED` documents (`avd.line_parity`).

The cases are the rail-optimized and fat-tree RoCE fabrics (lossless QoS, eBGP underlay), the
converged north-south fabric (EVPN VXLAN, all-active multihoming on leaf pairs) and the GPU
overlay (EVPN VXLAN, the GPU ports access ports of one VLAN stretched over the leaves, or of their
rail's with a VLAN a rail, every rail's SVI in the one GPU VRF). The second test
shows the comparison is not a check of nothing: one EVPN or QoS line altered, removed or moved in
fabgen's output is reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IN_CI, ROOT
from fabgen.pipeline import render_to

sys.path.append(str(ROOT / "benchmarks"))  # last: benchmarks/ansible.py must not shadow the ansible package
import avd  # noqa: E402  (benchmarks/ is not a package; line_parity needs no pyavd)

from inventories import inventory  # noqa: E402

pytestmark = pytest.mark.integration

AVD_VENV = ROOT / os.environ.get("AVD_VENV", ".venv-avd")  # the Makefile's AVD_VENV
AVD_PYTHON = AVD_VENV / "bin" / "python"
PYAVD = "6.4.0"  # the version avd.ACCEPTED is written for (pyproject's bench-avd extra)
# (kind of benchmarks/inventories.py, GPUs): 12 switches each; the north-south one has four leaf pairs
# and the GPU overlay (host_addressing evpn, docs/planes.md): its GPU ports access ports of one VLAN, or
# of their rail's (overlay.vlans rail)
CASES = {"eos-rail": 256, "eos-fattree": 256, "eos-northsouth": 1024, "eos-overlay": 256, "eos-overlay-rail": 256}


def _need_pyavd() -> None:
    probe = "import fabgen, pyavd; print(pyavd.__version__); print(fabgen.__file__)"
    run = (subprocess.run([str(AVD_PYTHON), "-c", probe], capture_output=True, text=True, timeout=120)
           if AVD_PYTHON.exists() else None)
    if run is None or run.returncode != 0:
        why = run.stderr.strip().splitlines()[-1] if run else f"no {AVD_PYTHON}"
        if IN_CI:
            raise RuntimeError(f"CI must have pyavd in {AVD_VENV} (`make test` builds it): {why}")
        pytest.skip(f"AVD comparison skipped: pyavd is not installed in {AVD_VENV} ({why}); "
                    "`make test` or `make bench-avd` installs it")
    version, where = run.stdout.split()
    assert version == PYAVD, f"{AVD_VENV} has pyavd {version}; avd.ACCEPTED is written for {PYAVD}"
    # AVD's inputs are made from this checkout's fabgen, not from another copy
    assert Path(where).resolve().is_relative_to(ROOT / "generator"), where


_RUNS: dict[str, dict] = {}


def compared(kind: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Render `kind` with fabgen and with AVD (once per test module); the texts and AVD's report."""
    if kind not in _RUNS:
        _need_pyavd()
        tmp = tmp_path_factory.mktemp(kind)
        inv = tmp / "inventory.yaml"
        inv.write_text(inventory(kind, CASES[kind]))
        render_to(inv, tmp / "fabgen")
        ours = tmp / "fabgen" / "f" / "switches"
        workers = str(min(2, len(os.sched_getaffinity(0))))
        run = subprocess.run([str(AVD_PYTHON), str(ROOT / "benchmarks" / "avd.py"), str(inv), str(tmp / "avd"),
                              workers, str(ours)], capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert run.returncode == 0, run.stderr[-3000:]
        report = json.loads(run.stdout.strip().splitlines()[-1])
        _RUNS[kind] = {
            "report": report, "out": tmp / "fabgen",
            "fabgen": {p.stem: p.read_text() for p in sorted(ours.glob("*.cfg"))},
            "avd": {p.stem: p.read_text() for p in sorted((tmp / "avd").glob("*.cfg"))},
        }
    return _RUNS[kind]


@pytest.mark.parametrize("kind", list(CASES))
def test_avd_writes_the_same_lines(kind: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    run = compared(kind, tmp_path_factory)
    report, ours, theirs = run["report"], run["fabgen"], run["avd"]
    assert report["version"] == PYAVD
    # one config per switch on each side, the same switches, and every one of them compared
    assert len(ours) == report["switches"] == 12, (len(ours), report["switches"])
    assert set(ours) == set(theirs)
    assert report["parity_checked"] == report["lines_checked"] == len(ours)
    assert report["parity_problems"] == [], report["parity_problems"]
    assert report["line_problems"] == [], report["line_problems"]
    # and here, with nothing cut off: every switch's lines, section by section
    for name in ours:
        assert avd.line_parity(ours[name], theirs[name]) == [], name
    # what was compared: the lossless QoS everywhere; EVPN where the design has it
    leaf = ours[min(n for n in ours if "leaf" in n)]
    for line in ("qos profile ROCE_LOSSLESS", "   priority-flow-control priority 3 no-drop",
                 "qos map dscp 26 to traffic-class 3", "priority-flow-control pause watchdog action drop"):
        assert line in leaf.splitlines(), line
    evpn = ("interface Vxlan1", "   address-family evpn")
    assert all(line in leaf.splitlines() for line in evpn) == (kind in ("eos-northsouth", "eos-overlay",
                                                                        "eos-overlay-rail"))
    assert ("      identifier 0000:0000:02fa:bc00:0001" in leaf.splitlines()) == (kind == "eos-northsouth")
    overlay = ("   switchport access vlan 900", "   vxlan vlan 900 vni 10900", "   vxlan vrf GPU vni 10003")
    assert all(line in leaf.splitlines() for line in overlay) == (kind == "eos-overlay")
    # a VLAN a rail (overlay.vlans rail): every rail's VLAN, VNI and anycast SVI on the leaf, in the one VRF,
    # its GPU ports access ports of its rail's (leaf 1: rail 1's)
    rails = ("   switchport access vlan 901", "   vxlan vrf GPU vni 10003",
             *(f"   vxlan vlan {900 + r} vni {10900 + r}" for r in range(1, 9)),
             *(f"interface Vlan{900 + r}" for r in range(1, 9)))
    assert all(line in leaf.splitlines() for line in rails) == (kind == "eos-overlay-rail")


@pytest.mark.parametrize("kind", ["eos-rail", "eos-fattree"])
def test_anta_config_rules_hold_on_avds_config(kind: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The running config ANTA's VerifyRunningConfig reads here is not fabgen's own text: AVD's
    config of the same switch (the `show running-config` an operator who deployed AVD's would
    collect, in EOS's order and indentation), each switch held to the rules of fabgen's ANTA
    catalog (fabgen verify --anta-catalog), which pass; AVD's config with the PFC priority moved fails."""
    import asyncio

    anta_catalog = pytest.importorskip("anta.catalog")
    from anta.device import AsyncEOSDevice
    from anta.tests.configuration import VerifyRunningConfig
    from test_verify_state import eos_json

    run = compared(kind, tmp_path_factory)
    catalog = run["out"].parent / "anta.yml"
    res = subprocess.run([sys.executable, "-m", "fabgen", "verify", str(run["out"]), "--anta-catalog", str(catalog)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    cat = anta_catalog.AntaCatalog.parse(str(catalog))
    checked = broken = 0
    for name, config in run["avd"].items():
        rules = [t.inputs for t in cat.tests if t.test is VerifyRunningConfig and name in t.inputs.filters.tags]
        assert len(rules) == 1, name
        dev = AsyncEOSDevice(host="192.0.2.1", username="u", password="p", name=name)  # never connected

        def verdict(text: str) -> tuple[str, list[str]]:
            out = asyncio.run(VerifyRunningConfig(dev, inputs=rules[0], eos_data=[eos_json(text)]).test())  # noqa: B023
            return out.result, list(out.messages)
        assert verdict(config) == ("success", []), name
        checked += 1
        moved = config.replace("priority-flow-control priority 3 no-drop", "priority-flow-control priority 4 no-drop")
        if moved != config:
            assert verdict(moved)[0] == "failure", name
            broken += 1
    assert checked == len(run["fabgen"]) == 12 and broken > 0


def _sub(text: str, *pairs: str) -> str:
    """`text` with each (old, new) pair replaced, each old text found exactly once."""
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def _swap(text: str, a: str, b: str) -> str:
    assert text.count(a) == 1 and text.count(b) == 1, (a, b)
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


# (case, switch, what is broken, the broken text from fabgen's, a problem line_parity must report)
BROKEN = [
    ("eos-northsouth", "f-su01-leaf1", "an Ethernet segment identifier",
     lambda t: _sub(t, "      identifier 0000:0000:02fa:bc00:0001\n", "      identifier 0000:0000:02fa:bc00:0011\n"),
     "only fabgen: interface Port-Channel1 / evpn ethernet-segment / identifier 0000:0000:02fa:bc00:0011"),
    ("eos-northsouth", "f-su01-leaf1", "a VRF's layer-3 VNI",
     lambda t: _sub(t, "   vxlan vrf STORAGE vni 4020\n", "   vxlan vrf STORAGE vni 4021\n"),
     "only avd: interface Vxlan1 / vxlan vrf STORAGE vni 4020"),
    # the same lines in the wrong VRFs: every line is still there, under another parent
    ("eos-northsouth", "f-su01-leaf1", "the route targets of two VRFs swapped",
     lambda t: _swap(t, "      route-target import evpn 4030:4030\n", "      route-target import evpn 4020:4020\n"),
     "/ vrf INBAND / route-target import evpn 4020:4020"),
    ("eos-northsouth", "f-su01-leaf1", "the EVPN address family not activated",
     lambda t: _sub(t, "   address-family evpn\n      neighbor EVPN-OVERLAY-PEERS activate\n",
                         "   address-family evpn\n"),
     "/ address-family evpn / neighbor EVPN-OVERLAY-PEERS activate"),
    ("eos-northsouth", "f-su01-leaf1", "an ECN threshold",
     lambda t: _sub(t, "minimum-threshold 150000 bytes", "minimum-threshold 160000 bytes"),
     "only fabgen: qos profile ROCE_LOSSLESS / uc-tx-queue 3 / random-detect ecn minimum-threshold 160000"),
    # strict priority on the RoCE queue and none on the CNP one: the same lines, the wrong queues
    ("eos-northsouth", "f-su01-leaf1", "strict priority on the wrong queue",
     lambda t: _sub(t, "   uc-tx-queue 3\n      no priority\n", "   uc-tx-queue 3\n      priority strict\n",
                    "   uc-tx-queue 6\n      priority strict\n", "   uc-tx-queue 6\n      no priority\n"),
     "only fabgen: qos profile ROCE_LOSSLESS / uc-tx-queue 3 / priority strict"),
    # a VLAN a rail: two rails' VNIs swapped
    ("eos-overlay-rail", "f-su01-leaf1", "two rails' VNIs swapped",
     lambda t: _sub(t, "   vxlan vlan 901 vni 10901\n", "   vxlan vlan 901 vni 10902\n",
                    "   vxlan vlan 902 vni 10902\n", "   vxlan vlan 902 vni 10901\n"),
     "only fabgen: interface Vxlan1 / vxlan vlan 901 vni 10902"),
    ("eos-rail", "f-su01-leaf1", "the RoCE DSCP's traffic class",
     lambda t: _sub(t, "qos map dscp 26 to traffic-class 3\n", "qos map dscp 26 to traffic-class 0\n"),
     "only avd: qos map dscp 26 to traffic-class 3"),
    ("eos-rail", "f-su01-leaf1", "the no-drop priority",
     lambda t: _sub(t, "   priority-flow-control priority 3 no-drop\n",
                    "   priority-flow-control priority 4 no-drop\n"),
     "only fabgen: qos profile ROCE_LOSSLESS / priority-flow-control priority 4 no-drop"),
    ("eos-rail", "f-su01-leaf1", "a host port shut",
     lambda t: _sub(t, "interface Ethernet1/1\n   description HOST_gpu00001_mlx5_0\n   no shutdown\n",
                         "interface Ethernet1/1\n   description HOST_gpu00001_mlx5_0\n   shutdown\n"),
     "only fabgen: interface Ethernet1/1 / shutdown"),
    ("eos-fattree", "f-spine01", "the PFC watchdog's timeout",
     lambda t: _sub(t, "priority-flow-control pause watchdog default timeout 0.2\n",
                         "priority-flow-control pause watchdog default timeout 0.3\n"),
     "only fabgen: priority-flow-control pause watchdog default timeout 0.3"),
]


@pytest.mark.parametrize("kind,switch,what,alter,expected", BROKEN, ids=[b[2] for b in BROKEN])
def test_comparison_rejects_a_broken_line(kind: str, switch: str, what: str, alter, expected: str,
                                          tmp_path_factory: pytest.TempPathFactory) -> None:
    run = compared(kind, tmp_path_factory)
    ours, theirs = run["fabgen"][switch], run["avd"][switch]
    assert avd.line_parity(ours, theirs) == []
    broken = alter(ours)
    assert broken != ours, f"{what}: the alteration did not apply"
    problems = avd.line_parity(broken, theirs)
    assert any(expected in p for p in problems), (what, problems)
