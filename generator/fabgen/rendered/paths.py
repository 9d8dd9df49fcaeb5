"""The render's contract in names: the columns of the tables fabgen writes, the counts report.json
holds, and patterns over a render folder's paths and texts. The targets write by these names;
the review, emulate and verify read by them, importing nothing else of the generator."""

from __future__ import annotations

import re

# a fabric's cabling.csv and addresses.csv, column by column (targets/fabric.py writes them)
CABLING_COLUMNS = ("a_device", "a_port", "z_device", "z_port", "speed", "media", "tier")
ADDRESS_COLUMNS = ("device", "role", "asn", "interface", "address", "peer_device", "peer_interface")
# the counts report.json holds per fabric (targets/report.py), which the review compares
COUNTED = ("nodes", "gpus", "endpoints", "pods", "scalable_units", "nvlink_racks", "links")

# a device's own files: a switch's config (each platform's `config_file`, spec/platforms.py, and NVUE's
# apply script; tests/test_architecture.py holds the two together), a node's folder
DEVICE_FILE = [
    re.compile(r"^[^/]+/switches/(?P<d>[^/]+?)(\.cfg|\.nvue\.yaml|\.nvue\.sh|/config_db\.json)$"),
    re.compile(r"^hosts/(?P<d>[^/]+)/"),
]
GROUP_FILE = re.compile(r"^host-groups/(?P<g>[^/]+)/")
# an IPv4 or IPv6 address or prefix, folded to <address> where devices change alike
ADDRESS = re.compile(r"\b\d{1,3}(\.\d{1,3}){3}(/\d{1,2})?\b|\b[0-9a-f]{0,4}(:[0-9a-f]{0,4}){2,7}(/\d{1,3})?\b", re.I)
