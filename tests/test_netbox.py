"""The NetBox export on every example render, without NetBox: files in an order where every
reference resolves, with cables equal to the cabling plan.

A real NetBox imports renders in tests/test_netbox_real.py (a few small ones: NetBox's import is
slow). Here, on the larger examples, the test does what NetBox's import forms would: the columns
must be fields of the form for that object type and the choice values members of NetBox's choice
sets (both pinned below from NetBox 4.7's dcim/ and ipam/forms/bulk_import.py and choices.py),
every name a row refers to created by a file imported before it.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from readback import read_cabling

from conftest import INVENTORIES
from fabgen.pipeline import render_to

# Fields of each import form (NetBox 4.7 bulk_import.py, class Meta: fields); we use a subset.
FORM_FIELDS = {
    "01-manufacturers.csv": {"name", "slug", "description", "owner", "comments", "tags"},
    "02-device-roles.csv": {"name", "slug", "parent", "color", "vm_role", "config_template", "description", "owner",
                            "comments", "tags"},
    "03-device-types.csv": {"manufacturer", "default_platform", "model", "slug", "part_number", "u_height",
                            "exclude_from_utilization", "is_full_depth", "subdevice_role", "airflow", "cooling_method",
                            "description", "weight", "weight_unit", "end_of_life", "owner", "comments", "tags"},
    "04-sites.csv": {"name", "slug", "status", "region", "group", "tenant", "facility", "time_zone", "description",
                     "physical_address", "shipping_address", "latitude", "longitude", "owner", "comments", "tags"},
    "05-racks.csv": {"site", "location", "group", "name", "facility_id", "tenant", "status", "role", "rack_type",
                     "form_factor", "serial", "asset_tag", "width", "u_height", "desc_units", "outer_width",
                     "outer_height", "outer_depth", "outer_unit", "mounting_depth", "airflow", "description",
                     "owner", "comments", "tags"},
    "06-devices.csv": {"name", "role", "tenant", "manufacturer", "device_type", "platform", "serial", "asset_tag",
                       "status", "site", "location", "rack", "position", "face", "latitude", "longitude", "parent",
                       "device_bay", "airflow", "virtual_chassis", "vc_position", "vc_priority", "cluster",
                       "description", "config_template", "owner", "comments", "tags"},
    "07-interfaces.csv": {"device", "name", "label", "parent", "bridge", "lag", "type", "speed", "duplex", "enabled",
                          "mark_connected", "wwn", "vdcs", "mtu", "mgmt_only", "description", "poe_mode", "poe_type",
                          "mode", "vlan_group", "untagged_vlan", "tagged_vlans", "qinq_svlan", "vrf", "rf_role",
                          "rf_channel", "rf_channel_frequency", "rf_channel_width", "tx_power", "owner", "tags"},
    "08-cables.csv": {"side_a_site", "side_a_device", "side_a_power_panel", "side_a_type", "side_a_name",
                      "side_b_site", "side_b_device", "side_b_power_panel", "side_b_type", "side_b_name", "type",
                      "status", "profile", "tenant", "bundle", "label", "color", "length", "length_unit",
                      "description", "owner", "comments", "tags"},
    "09-vrfs.csv": {"name", "rd", "tenant", "enforce_unique", "description", "import_targets", "export_targets",
                    "owner", "comments", "tags"},
    "11-ip-addresses.csv": {"address", "vrf", "tenant", "status", "role", "device", "virtual_machine", "interface",
                            "fhrp_group", "is_primary", "is_oob", "dns_name", "description", "owner", "comments",
                            "tags"},
}
FORM_FIELDS["10-virtual-interfaces.csv"] = FORM_FIELDS["07-interfaces.csv"]
# Members of NetBox 4.6's choice sets that an export may use (dcim/choices.py).
INTERFACE_TYPES = {"lag", "infiniband-hdr", "infiniband-ndr", "infiniband-xdr", "400gbase-x-osfp", "800gbase-x-osfp",
                   "400gbase-x-qsfp112", "400gbase-x-qsfpdd", "800gbase-x-qsfpdd", "200gbase-x-qsfp56",
                   "100gbase-x-qsfp28", "1000base-t", "other"}
CABLE_TYPES = {"mmf-om4", "smf-os2", "dac-passive", "dac-active", "aoc", "cat6"}
STATUSES = {"planned"}  # DeviceStatusChoices, SiteStatusChoices and LinkStatusChoices all have it


def read(out: Path) -> dict[str, list[dict[str, str]]]:
    files = {}
    for path in sorted((out / "netbox").glob("*.csv")):
        with open(path, newline="") as fh:
            files[path.name] = list(csv.DictReader(fh))
    return files


def check_import(out: Path) -> None:
    """What NetBox's import would refuse: unknown columns or choices, and references to objects no
    earlier file creates."""
    files = read(out)
    for name, rows in files.items():
        with open(out / "netbox" / name, newline="") as fh:
            header = next(csv.reader(fh))
        assert set(header) <= FORM_FIELDS[name], f"{name}: {sorted(set(header) - FORM_FIELDS[name])}"
        assert rows, f"{name} has no rows"
    for name in ("01-manufacturers.csv", "02-device-roles.csv", "03-device-types.csv", "04-sites.csv",
                 "06-devices.csv", "07-interfaces.csv", "08-cables.csv"):
        assert name in files, f"{name} missing"
    manufacturers = {r["name"] for r in files["01-manufacturers.csv"]}
    roles = {r["name"] for r in files["02-device-roles.csv"]}
    types = {}
    for r in files["03-device-types.csv"]:
        assert r["manufacturer"] in manufacturers, r
        types[r["model"]] = r["manufacturer"]
    sites = {r["name"] for r in files["04-sites.csv"]}
    assert all(r["status"] in STATUSES for r in files["04-sites.csv"])
    devices = set()
    racks = {r["name"] for r in files.get("05-racks.csv", [])}
    for r in files["06-devices.csv"]:
        assert r["name"] not in devices, f"device {r['name']} twice"
        assert r["role"] in roles and r["site"] in sites, r
        assert r["status"] in STATUSES, f"status {r['status']} of {r['name']}"
        assert types.get(r["device_type"]) == r["manufacturer"], r
        assert r.get("rack", "") in racks | {""}, r
        devices.add(r["name"])
    interfaces = set()
    for r in files["07-interfaces.csv"]:
        assert r["device"] in devices, r
        assert (r["device"], r["name"]) not in interfaces, f"interface {r['device']} {r['name']} twice"
        assert r["type"] in INTERFACE_TYPES and (r["type"] == "lag" or int(r["speed"]) > 0), r  # a LAG: no speed
        interfaces.add((r["device"], r["name"]))
    ends = set()
    for r in files["08-cables.csv"]:
        assert r["type"] in CABLE_TYPES and r["status"] in STATUSES, r
        for side in ("a", "b"):
            end = (r[f"side_{side}_device"], r[f"side_{side}_name"])
            assert r[f"side_{side}_type"] == "dcim.interface"
            assert end in interfaces, f"cable end {end} is no interface"
            assert end not in ends, f"{end} cabled twice"
            ends.add(end)
        assert len(r["label"]) <= 100  # Cable.label's max_length
    vrfs = {r["name"] for r in files.get("09-vrfs.csv", [])}
    for r in files.get("10-virtual-interfaces.csv", []):
        assert r["device"] in devices and (r["device"], r["name"]) not in interfaces, r
        assert r["type"] == "virtual" and r["parent"] in {"", *(n for d, n in interfaces if d == r["device"])}, r
        interfaces.add((r["device"], r["name"]))
    for r in files.get("11-ip-addresses.csv", []):
        assert (r["device"], r["interface"]) in interfaces and r["vrf"] in vrfs | {""}, r
        assert r["status"] == "reserved" and r["role"] in {"", "loopback", "anycast"}, r


@pytest.mark.parametrize("case,fabrics", [("superpod-4su", ["compute"]), ("roce-3tier", ["eth"]),
                                          ("ib-storage", ["ib"]), ("spectrumx-1su", ["sx"]),
                                          ("gb300-nvl72", ["compute"]),
                                          ("b300-spectrumx-2plane", ["sx-plane1", "sx-plane2"]),
                                          # the GPU overlay: addresses on each leaf's vlan900, in VRF GPU
                                          ("era-2-4-5-800", ["gpu-plane1", "gpu-plane2", "ns", "oob"])])
def test_export_imports_in_order_and_equals_the_cabling_plan(case: str, fabrics: list[str], tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    check_import(tmp_path)
    files = read(tmp_path)
    cables = {(r["side_a_device"], r["side_a_name"], r["side_b_device"], r["side_b_name"])
              for r in files["08-cables.csv"]}
    plan = {(r["a_device"], r["a_port"], r["z_device"], r["z_port"])
            for f in fabrics for r in read_cabling(tmp_path, f)}
    assert cables == plan and len(files["08-cables.csv"]) == len(plan)
    devices = {r["name"] for r in files["06-devices.csv"]}
    assert devices == {d for c in plan for d in (c[0], c[2])}
    # interfaces: exactly the cabled ports (and the north-south bonds, LAGs), each with its link's speed
    assert {(r["device"], r["name"]) for r in files["07-interfaces.csv"] if r["type"] != "lag"} == \
        {e for c in plan for e in ((c[0], c[1]), (c[2], c[3]))}


def test_interface_types_follow_kind_speed_and_cage(tmp_path: Path) -> None:
    from fabgen.targets.netbox import interface_type

    assert interface_type("infiniband", "OSFP", 400) == "infiniband-ndr"
    assert interface_type("infiniband", "OSFP", 800) == "infiniband-xdr"
    assert interface_type("roce", "OSFP", 400) == "400gbase-x-osfp"
    assert interface_type("roce", "osfp2", 400) == "400gbase-x-osfp"  # a node's second OSFP cage
    assert interface_type("spectrum-x", "QSFP112", 400) == "400gbase-x-qsfp112"
    assert interface_type("roce", "SFP28", 25) == "other"


@pytest.mark.parametrize("break_it,message", [
    (lambda d: (d / "06-devices.csv").write_text((d / "06-devices.csv").read_text().replace(",planned,", ",live,", 1)),
     "status"),
    (lambda d: (d / "08-cables.csv").write_text((d / "08-cables.csv").read_text()
                                                 .replace("Ethernet1/1", "Ethernet99/9", 1)),
     "is no interface"),
    (lambda d: (d / "07-interfaces.csv").write_text((d / "07-interfaces.csv").read_text().replace("speed", "rate", 1)),
     "rate"),
])
def test_the_import_check_rejects_a_broken_export(break_it, message: str, tmp_path: Path) -> None:
    render_to(INVENTORIES / "roce-2node.yaml", tmp_path)
    check_import(tmp_path)
    break_it(tmp_path / "netbox")
    with pytest.raises(AssertionError, match=message):
        check_import(tmp_path)


def test_growth_only_adds_rows(tmp_path: Path) -> None:
    """A planned fabric grown by a unit: every row of the smaller export is in the larger one."""
    text = (INVENTORIES / "spectrumx-1su.yaml").read_text()
    render_to(INVENTORIES / "spectrumx-1su.yaml", tmp_path / "a")
    (tmp_path / "b.yaml").write_text(text.replace("count: 64", "count: 128"))
    render_to(tmp_path / "b.yaml", tmp_path / "b")
    for name in ("06-devices.csv", "07-interfaces.csv", "08-cables.csv", "10-virtual-interfaces.csv",
                 "11-ip-addresses.csv"):
        a = set((tmp_path / "a" / "netbox" / name).read_text().splitlines())
        b = set((tmp_path / "b" / "netbox" / name).read_text().splitlines())
        assert a <= b and len(b) > len(a), name
    # the review shows the cabling plan's diff, not the export's copy of it
    from fabgen.review import compare as diff
    from fabgen.review.format import format_text

    old, new = diff.load_sides(tmp_path / "a", tmp_path / "b")
    text = format_text(diff.compare(old, new), "a", "b")
    assert "== sx/cabling.csv" in text and "== netbox/" not in text
    shutil.rmtree(tmp_path / "a")


def test_netbox_growth_writes_only_new_objects_and_refuses_what_is_not_growth(tmp_path: Path) -> None:
    """fabgen netbox-growth: the grown cluster's new rows with each file's header; a render that
    changes an existing object is no growth (exit 1, named); bad input exits 2 writing nothing."""
    import subprocess
    import sys

    text = (INVENTORIES / "spectrumx-1su.yaml").read_text()
    render_to(INVENTORIES / "spectrumx-1su.yaml", tmp_path / "a")
    (tmp_path / "b.yaml").write_text(text.replace("count: 64", "count: 128"))
    render_to(tmp_path / "b.yaml", tmp_path / "b")

    def growth(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "fabgen", "netbox-growth", *args], capture_output=True,
                              text=True, timeout=120)

    res = growth(str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "g"))
    assert res.returncode == 0, res.stderr
    a, b = read(tmp_path / "a"), read(tmp_path / "b")
    g = read(tmp_path / "g")
    assert g and "03-device-types.csv" not in g  # nothing new there
    for name, rows in g.items():
        assert rows and (tmp_path / "g" / "netbox" / name).read_text().splitlines()[0] == \
            (tmp_path / "b" / "netbox" / name).read_text().splitlines()[0]
        assert len(a[name]) + len(rows) == len(b[name]) and not [r for r in rows if r in a[name]], name
    # an existing device's row changed: not a growth
    devices = tmp_path / "b" / "netbox" / "06-devices.csv"
    (tmp_path / "c").mkdir()
    shutil.copytree(tmp_path / "b", tmp_path / "c", dirs_exist_ok=True)
    changed = tmp_path / "c" / "netbox" / "06-devices.csv"
    changed.write_text(devices.read_text().replace(",planned,", ",planned,changed ", 1))
    res = growth(str(tmp_path / "a"), str(tmp_path / "c"), "-o", str(tmp_path / "h"))
    assert res.returncode == 2 and "06-devices.csv" in res.stderr and not (tmp_path / "h").exists()  # edited file
    # ... and as fabgen would write it (re-rendered with another description): exit 1, named
    (tmp_path / "d.yaml").write_text(text.replace("count: 64", "count: 128").replace("cluster: ", "cluster: x", 1))
    render_to(tmp_path / "d.yaml", tmp_path / "d")
    res = growth(str(tmp_path / "a"), str(tmp_path / "d"), "-o", str(tmp_path / "h"))
    assert res.returncode == 1 and "not a growth" in res.stderr and not (tmp_path / "h").exists(), res.stderr
    res = growth(str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "g"))  # exists
    assert res.returncode == 2 and "exists" in res.stderr
    res = growth(str(tmp_path / "a.yaml"), str(tmp_path / "b"), "-o", str(tmp_path / "i"))
    assert res.returncode == 2 and "Traceback" not in res.stderr and not (tmp_path / "i").exists()
