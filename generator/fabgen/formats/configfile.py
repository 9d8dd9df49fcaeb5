"""ansible/configs/<device>.json: a switch's structured config as Ansible's plays read it
(`lookup('file', ...) | from_json`; targets/ansible.py says why it is not in host_vars). Written
by the Ansible target, and by a switch target that makes each switch's config only where it
writes the switch's files (NVUE, targets.Deferred): one writer, so the two cannot differ."""

from __future__ import annotations

from typing import Any

import orjson

_ORJSON = orjson.OPT_NON_STR_KEYS  # an int key (an NVUE traffic class) as a string, as json writes it


def _config_json(data: dict[str, Any]) -> bytes:
    """ansible/configs/<device>.json (read with from_json, never as YAML): one line per key and
    per key of fabgen_config, like host_vars, written by orjson (compact separators)."""
    lines = []
    for key, value in data.items():
        if key == "fabgen_config" and isinstance(value, dict) and value:
            inner = b",\n".join(b"  " + orjson.dumps(k, option=_ORJSON) + b":" + orjson.dumps(v, option=_ORJSON)
                                 for k, v in value.items())
            lines.append(b" " + orjson.dumps(key) + b":{\n" + inner + b"\n }")
        else:
            lines.append(b" " + orjson.dumps(key) + b":" + orjson.dumps(value, option=_ORJSON))
    return b"{\n" + b",\n".join(lines) + b"\n}\n"


def config_file(name: str, platform: str, config: dict[str, Any]) -> tuple[str, bytes]:
    """A switch's ansible/configs/<device>.json, for the targets that write it with the switch's
    own files (NVUE: the tree is made there and nowhere else)."""
    return f"ansible/configs/{name}.json", _config_json({"fabgen_platform": platform, "fabgen_config": config})
