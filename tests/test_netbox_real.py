"""A real NetBox imports fabgen's NetBox files, as docs/netbox.md tells a user to.

NetBox (the PyPI package, in the Makefile's NETBOX_VENV) with PostgreSQL and Redis from Debian
(tests/netbox_server.py, started by conftest.py while the suite runs); each render goes into a
database of its own through NetBox's bulk-import pages (tests/netbox_import.py). Asserted from
what NetBox then holds: every row of every file imported, every cable between its two planned
interfaces, every planned address on its planned interface and VRF, NVL72 trays in their racks;
a grown cluster's growth files (fabgen netbox-growth) add exactly the new objects; a device-type
file without u_height (what fabgen wrote before) is refused by NetBox; NVIDIA's 2-4-5-800 design
with its GPU EVPN overlay (one anycast gateway address on an SVI of every leaf of a plane) imports
whole.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest

from conftest import IN_CI, INVENTORIES, NETBOX_VENV

pytestmark = pytest.mark.integration

DATA = Path(__file__).parent / "data"
DRIVER = Path(__file__).parent / "netbox_import.py"
FABGEN = [sys.executable, "-m", "fabgen"]


def _render(nb, inventory: Path, out: Path) -> Path:
    code, _, err = nb.run([*FABGEN, "render", str(inventory), "-o", str(out)], timeout=300)
    assert code == 0, err[-3000:]
    return out


def _import(nb, database: str, folder: Path, fresh: bool = True) -> list[dict]:
    env = nb.database(database) if fresh else nb.env(database)
    code, out, err = nb.run([str(NETBOX_VENV / "bin" / "python"), str(DRIVER), "import", str(folder)], env=env)
    assert code == 0, err[-3000:]
    return json.loads(out)


def _dump(nb, database: str) -> dict:
    code, out, err = nb.run([str(NETBOX_VENV / "bin" / "python"), str(DRIVER), "dump"], env=nb.env(database),
                            timeout=600)
    assert code == 0, err[-3000:]
    return json.loads(out)


def prepare(nb) -> None:
    """Queue the renders and imports (NetBox's import takes minutes): conftest.py calls this as the
    run starts, so they run beside the other tests; the tests below assert on what they found."""
    work = nb.dir / "renders"

    def nvl72() -> dict:
        base = _render(nb, DATA / "netbox-nvl72.yaml", work / "base")
        first = {"result": _import(nb, "nvl72", base / "netbox"), "held": _dump(nb, "nvl72"), "render": base}
        grown = _render(nb, DATA / "netbox-nvl72-grown.yaml", work / "grown")
        code, _, err = nb.run([*FABGEN, "netbox-growth", str(base), str(grown), "-o", str(work / "growth")],
                              timeout=300)
        assert code == 0, err
        growth = work / "growth" / "netbox"
        return {**first, "grown": grown, "growth": growth, "growth_result": _import(nb, "nvl72", growth, fresh=False),
                "after": _dump(nb, "nvl72")}

    def roce() -> dict:
        out = _render(nb, INVENTORIES / "roce-2node.yaml", work / "roce")
        return {"result": _import(nb, "roce", out / "netbox"), "held": _dump(nb, "roce"), "render": out}

    def broken() -> dict:
        out = work / "roce" if (work / "roce").exists() else _render(nb, INVENTORIES / "roce-2node.yaml", work / "r2")
        folder = work / "broken"
        folder.mkdir()
        for name in ("01-manufacturers.csv", "02-device-roles.csv", "03-device-types.csv", "06-devices.csv"):
            shutil.copy(out / "netbox" / name, folder / name)
        rows = list(csv.reader((folder / "03-device-types.csv").open()))
        cut = rows[0].index("u_height")
        with (folder / "03-device-types.csv").open("w", newline="") as fh:
            csv.writer(fh, lineterminator="\n").writerows([r[:cut] + r[cut + 1:] for r in rows])
        return {"result": _import(nb, "broken", folder)}

    def overlay() -> dict:
        out = _render(nb, INVENTORIES / "era-2-4-5-800.yaml", work / "era")
        return {"result": _import(nb, "era", out / "netbox"), "held": _dump(nb, "era"), "render": out}

    for name, job in (("roce", roce), ("broken", broken), ("nvl72", nvl72), ("overlay", overlay)):
        nb.later(name, job)


@pytest.fixture(scope="module")
def netbox():
    if not (NETBOX_VENV / ".installed").exists():
        if IN_CI:
            raise RuntimeError(f"CI must have NetBox in {NETBOX_VENV} (`make test` builds it)")
        pytest.skip(f"NetBox is not installed in {NETBOX_VENV} (make {NETBOX_VENV}/.installed)")
    from netbox_server import shared

    return shared(NETBOX_VENV, prepare)


def _rows(folder: Path, name: str) -> list[dict[str, str]]:
    path = next(folder.glob(f"[0-9][0-9]-{name}.csv"), None)
    return list(csv.DictReader(path.open())) if path else []


def _all_imported(result: list[dict], folder: Path) -> None:
    files = sorted(p.name for p in folder.glob("*.csv"))
    assert [r["file"] for r in result] == files, result  # every file, none stopped by an error
    for r in result:
        assert r.get("errors") is None and r["imported"] == r["rows"] > 0, r


def _holds_plan(held: dict, folder: Path) -> None:
    """What NetBox holds is the plan of FOLDER's files, object by object."""
    devices = _rows(folder, "devices")
    assert set(held["devices"]) == {d["name"] for d in devices}
    for d in devices:
        assert held["devices"][d["name"]]["type"] == d["device_type"]
        assert held["devices"][d["name"]]["rack"] == d.get("rack", "")
    types = {t["model"]: float(t["u_height"]) for t in _rows(folder, "device-types")}
    assert all(types[v["type"]] == v["u_height"] for v in held["devices"].values())
    assert held["racks"] == sorted(r["name"] for r in _rows(folder, "racks"))
    planned = sorted([[f"{c['side_a_device']}:{c['side_a_name']}"], [f"{c['side_b_device']}:{c['side_b_name']}"]]
                     for c in _rows(folder, "cables"))
    assert held["cables"] == planned  # every cable terminates on exactly its two planned interfaces
    ports = {(i["device"], i["name"]): i for i in _rows(folder, "interfaces") + _rows(folder, "virtual-interfaces")}
    assert {(i[0], i[1]) for i in held["interfaces"]} == set(ports)
    for dev, name, _type, lag, parent, _vrf in held["interfaces"]:
        assert lag == ports[dev, name].get("lag", "") and parent == ports[dev, name].get("parent", "")
    addresses = sorted([a["address"], a["vrf"], a["role"], a["device"], a["interface"]]
                       for a in _rows(folder, "ip-addresses"))
    assert held["addresses"] == addresses
    assert held["vrfs"] == sorted(v["name"] for v in _rows(folder, "vrfs"))


def _planned_addresses(render: Path) -> set[str]:
    """Every address of every fabric's addresses.csv (the render's own address plan)."""
    return {r["address"] for p in render.glob("*/addresses.csv") for r in csv.DictReader(p.open()) if r["address"]}


def test_nvl72_cluster_imports_whole_and_grows_by_new_objects_only(netbox):
    """Compute InfiniBand, a north-south Spectrum-X fabric with bonds and tenant VRFs, out-of-band:
    imported whole; then the cluster grown by a rack, its growth files imported on top."""
    run = netbox.result("nvl72")
    base, held = run["render"], run["held"]
    _all_imported(run["result"], base / "netbox")
    _holds_plan(held, base / "netbox")
    assert {a[0] for a in held["addresses"]} == _planned_addresses(base)
    assert held["racks"] and held["vrfs"] and any(i[3] for i in held["interfaces"])  # racks, VRFs, LAGs: there

    growth, after = run["growth"], run["after"]
    _all_imported(run["growth_result"], growth)
    _holds_plan(after, run["grown"] / "netbox")  # exactly the grown plan: nothing twice, nothing missing
    assert len(after["devices"]) - len(held["devices"]) == len(_rows(growth, "devices")) > 0
    assert len(after["cables"]) - len(held["cables"]) == len(_rows(growth, "cables")) > 0


def test_eos_fabric_addresses_on_loopbacks_and_svis(netbox):
    """A RoCE EOS fabric: leaf SVIs and loopbacks are interfaces NetBox creates from the files, each
    address on its own."""
    run = netbox.result("roce")
    out, held = run["render"], run["held"]
    _all_imported(run["result"], out / "netbox")
    _holds_plan(held, out / "netbox")
    assert {a[0] for a in held["addresses"]} == _planned_addresses(out)
    assert any(a[2] == "loopback" for a in held["addresses"])


def test_gpu_overlay_anycast_gateways_and_svis_import_whole(netbox):
    """inventories/era-2-4-5-800.yaml (host_addressing evpn on two GB300 planes, a north-south pair,
    out of band): every file imported, NetBox holds the plan; each plane's gateway is one address
    held on `vlan900` of every leaf of the plane, in VRF GPU, with role anycast, beside each leaf's
    own SVI address and the trays' ports' addresses in the same VRF."""
    run = netbox.result("overlay")
    out, held = run["render"], run["held"]
    _all_imported(run["result"], out / "netbox")
    _holds_plan(held, out / "netbox")
    assert {a[0] for a in held["addresses"]} == _planned_addresses(out)
    leaves = {d for d in held["devices"] if d.startswith("gpu-plane") and "-leaf" in d}
    assert len(leaves) == 8, sorted(leaves)  # 4 a plane at one rack (ERA-00012 Table 11)
    for plane, gateway in ((1, "192.168.0.1/20"), (2, "192.168.16.1/20")):
        on = {(a[3], a[4]) for a in held["addresses"] if a[0] == gateway and a[1] == "GPU" and a[2] == "anycast"}
        assert on == {(d, "vlan900") for d in leaves if d.startswith(f"gpu-plane{plane}-")}, (plane, on)
    own = [a for a in held["addresses"] if a[4] == "vlan900" and a[2] != "anycast"]
    assert len(own) == len(leaves) and all(a[1] == "GPU" for a in own), own
    assert "GPU" in held["vrfs"]


def test_netbox_refuses_device_types_without_height(netbox):
    """The check can fail: the device-type file as fabgen wrote it before (no u_height) is refused
    by NetBox, and the import stops there."""
    result = netbox.result("broken")["result"]
    assert [r["file"] for r in result] == ["01-manufacturers.csv", "02-device-roles.csv", "03-device-types.csv"]
    assert "u_height" in " ".join(result[-1]["errors"]) and "imported" not in result[-1]
