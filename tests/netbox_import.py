"""Runs inside a real NetBox's Python (its own virtualenv): imports fabgen's NetBox files through
NetBox's bulk-import pages, as a user pasting them does, and reports what NetBox holds.

    python netbox_import.py import DIR   -> JSON: per file, the rows NetBox imported or its errors
    python netbox_import.py dump         -> JSON: devices, racks, interfaces, cables, VRFs, IP addresses

The pages are requested through Django's test client (NetBox's URLs, middleware, views and import
forms; no web server). Which page takes which file is the table of docs/netbox.md. Not part of
fabgen: tests/test_netbox_real.py runs it with NETBOX_ROOT and the database of a NetBox it started.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "netbox.settings")

import django  # noqa: E402

django.setup()

from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

# the import page of each file, by its name without the number (docs/netbox.md, "Import order")
PAGES = {
    "manufacturers": "/dcim/manufacturers/import/",
    "device-roles": "/dcim/device-roles/import/",
    "device-types": "/dcim/device-types/import/",
    "sites": "/dcim/sites/import/",
    "racks": "/dcim/racks/import/",
    "devices": "/dcim/devices/import/",
    "interfaces": "/dcim/interfaces/import/",
    "cables": "/dcim/cables/import/",
    "vrfs": "/ipam/vrfs/import/",
    "virtual-interfaces": "/dcim/interfaces/import/",
    "ip-addresses": "/ipam/ip-addresses/import/",
}


def client() -> Client:
    from users.models import User

    user = User.objects.filter(username="fabgen-test").first()
    if user is None:
        user = User.objects.create_superuser("fabgen-test", "test@example.invalid", "not-a-real-password-1")
    c = Client()
    c.force_login(user)
    return c


def import_dir(folder: Path) -> list[dict]:
    setup_test_environment()
    c = client()
    out = []
    for path in sorted(folder.glob("*.csv")):
        kind = re.sub(r"^\d+-", "", path.stem)
        text = path.read_text()
        rows = sum(1 for _ in csv.reader(io.StringIO(text))) - 1
        resp = c.post(PAGES[kind], {"data": text, "format": "csv", "csv_delimiter": ",", "import_method": "direct"})
        entry = {"file": path.name, "rows": rows, "status": resp.status_code}
        if resp.status_code == 302:
            from django.contrib.messages import get_messages

            msgs = [str(m) for m in get_messages(resp.wsgi_request)]
            counts = [int(m.group(1)) for m in map(re.compile(r"^Imported (\d+) ").match, msgs) if m]
            entry["imported"] = counts[-1] if counts else -1
            entry["messages"] = msgs
        else:
            form = resp.context["form"] if resp.context and "form" in resp.context else None
            errors = form.errors.get_json_data() if form is not None else {}
            entry["errors"] = [e["message"] for v in errors.values() for e in v][:5]
        out.append(entry)
        if "errors" in entry:
            break  # later files refer to this one's objects
    return out


def dump() -> dict:
    from dcim.models import Cable, Device, Interface, Rack
    from ipam.models import VRF, IPAddress

    def end(terms: list) -> list[str]:
        return sorted(f"{t.device.name}:{t.name}" for t in terms)

    return {
        "devices": {d.name: {"type": d.device_type.model, "role": d.role.name,
                             "u_height": float(d.device_type.u_height), "rack": d.rack.name if d.rack else ""}
                    for d in Device.objects.all()},
        "racks": sorted(r.name for r in Rack.objects.all()),
        "interfaces": sorted([i.device.name, i.name, i.type, i.lag.name if i.lag else "",
                              i.parent.name if i.parent else "", i.vrf.name if i.vrf else ""]
                             for i in Interface.objects.select_related("device", "lag", "parent", "vrf")),
        "cables": sorted([end(c.a_terminations), end(c.b_terminations)] for c in Cable.objects.all()),
        "vrfs": sorted(v.name for v in VRF.objects.all()),
        "addresses": sorted([str(ip.address), ip.vrf.name if ip.vrf else "", ip.role or "",
                             ip.assigned_object.device.name if ip.assigned_object else "",
                             ip.assigned_object.name if ip.assigned_object else ""]
                            for ip in IPAddress.objects.prefetch_related("assigned_object", "vrf")),
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["import"] and len(argv) == 2:
        print(json.dumps(import_dir(Path(argv[1]))))
    elif argv == ["dump"]:
        print(json.dumps(dump()))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
