"""Patterns over a render folder's paths and texts that the review (diff.py) and the two sides
it compares (diffsides.py) both read: kept here so that neither imports the other at load."""

from __future__ import annotations

import re

# a device's own files: a switch's config, a node's folder
DEVICE_FILE = [
    re.compile(r"^[^/]+/switches/(?P<d>[^/]+?)(\.cfg|\.nvue\.yaml|\.nvue\.sh|/config_db\.json)$"),
    re.compile(r"^hosts/(?P<d>[^/]+)/"),
]
GROUP_FILE = re.compile(r"^host-groups/(?P<g>[^/]+)/")
# an IPv4 or IPv6 address or prefix, folded to <address> where devices change alike
ADDRESS = re.compile(r"\b\d{1,3}(\.\d{1,3}){3}(/\d{1,2})?\b|\b[0-9a-f]{0,4}(:[0-9a-f]{0,4}){2,7}(/\d{1,3})?\b", re.I)
