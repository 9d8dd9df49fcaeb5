"""A custom RoCE QoS reaches every switch file, read back from the files themselves, and the hosts'
files agree with it (the switch and host sides of one intent).

Every value of `ethernet.qos` is set away from its default, on each Ethernet platform that takes
it (EOS and SONiC; NVUE runs Cumulus's RoCE profile and refuses another value: test_nvue.py), and
read back from the rendered text: the DSCP map, traffic class to queue, priority groups, no-drop
priorities, the scheduler (RoCE's weight, strict CNPs), ECN thresholds and probability, and the
PFC watchdog's timers and action. The hosts' hca-setup.sh and nccl.env must say the same DSCP,
priority and CNP marking."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fabgen.pipeline import render_to

QOS = {"roce_dscp": 24, "roce_priority": 4, "cnp_dscp": 46, "cnp_priority": 7, "roce_bandwidth_percent": 60,
       "ecn": {"min_threshold_kbytes": 200, "max_threshold_kbytes": 2000, "probability": 50},
       "pfc_watchdog": {"detection_ms": 300, "restoration_ms": 400, "poll_interval_ms": 100}}

INVENTORY = """\
version: 1
cluster: q
node_groups:
  - {{name: gpu, model: dgx-h100, count: 4}}
fabrics:
  - name: f
    kind: roce
    platform: {platform}
    topology: rail-optimized
    switch_model: {model}
    node_groups: [gpu]
    ethernet:
      qos: {qos}
"""


def read_eos_qos(text: str) -> dict:  # noqa: C901 (one case a kind of config line)
    """The QoS an EOS running-config sets: global maps and watchdog, the qos profile's queues."""
    dscp = [0] * 64
    tc_queue: dict[int, int] = {}
    queues: dict[int, dict] = {}
    no_drop: list[int] = []
    wd: dict[str, str] = {}
    block, queue = "", None
    for line in text.splitlines():
        if not line.startswith(" "):
            block, queue = line, None
            if m := re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d)", line):
                for d in m.group(1).split():
                    dscp[int(d)] = int(m.group(2))
            elif m := re.fullmatch(r"qos map traffic-class (\d) to tx-queue (\d)", line):
                tc_queue[int(m.group(1))] = int(m.group(2))
            elif m := re.fullmatch(r"priority-flow-control pause watchdog default (timeout|recovery-time|"
                                   r"polling-interval) (\S+)", line):
                wd[m.group(1)] = m.group(2)
            elif m := re.fullmatch(r"priority-flow-control pause watchdog action (\S+)", line):
                wd["action"] = m.group(1)
            continue
        if not block.startswith("qos profile"):
            continue
        s = line.strip()
        if m := re.fullmatch(r"priority-flow-control priority (\d) no-drop", s):
            no_drop.append(int(m.group(1)))
        elif m := re.fullmatch(r"uc-tx-queue (\d)", s):
            queue = queues.setdefault(int(m.group(1)), {})
        elif queue is not None and (m := re.fullmatch(r"bandwidth percent (\d+)", s)):
            queue["weight"] = int(m.group(1))
        elif queue is not None and s == "priority strict":
            queue["strict"] = True
        elif queue is not None and (m := re.fullmatch(r"random-detect ecn minimum-threshold (\d+) bytes "
                                                      r"maximum-threshold (\d+) bytes max-mark-probability (\d+).*",
                                                      s)):
            queue["ecn"] = tuple(int(x) for x in m.groups())
    return {"dscp": dscp, "tc_queue": tc_queue, "queues": queues, "no_drop": no_drop, "watchdog": wd}


def read_sonic_qos(db: dict) -> dict:
    """The QoS a config_db.json sets on its lossless ports (every one alike)."""
    ports = {k: v for k, v in db["PORT_QOS_MAP"].items() if k != "global"}
    port_maps = {json.dumps(v, sort_keys=True) for v in ports.values()}
    assert len(port_maps) == 1, "every lossless port alike"
    pm = json.loads(port_maps.pop())
    assert db["PORT_QOS_MAP"]["global"]["dscp_to_tc_map"] == pm["dscp_to_tc_map"]
    dscp = [int(db["DSCP_TO_TC_MAP"][pm["dscp_to_tc_map"]][str(d)]) for d in range(64)]
    tc_queue = {int(k): int(v) for k, v in db["TC_TO_QUEUE_MAP"][pm["tc_to_queue_map"]].items()}
    tc_pg = {int(k): int(v) for k, v in db["TC_TO_PRIORITY_GROUP_MAP"][pm["tc_to_pg_map"]].items()}
    queues: dict[int, dict] = {}
    port = next(iter(ports))
    for key, row in db["QUEUE"].items():
        name, _, q = key.partition("|")
        if name != port:
            continue
        sched = db["SCHEDULER"][row["scheduler"]]
        entry = queues.setdefault(int(q), {})
        if sched["type"] == "STRICT":
            entry["strict"] = True
        else:
            entry["weight"] = int(sched["weight"])
        if "wred_profile" in row:
            w = db["WRED_PROFILE"][row["wred_profile"]]
            entry["ecn"] = (int(w["green_min_threshold"]), int(w["green_max_threshold"]),
                            int(w["green_drop_probability"]))
    wd = db["PFC_WD"][port]
    return {"dscp": dscp, "tc_queue": tc_queue, "tc_pg": tc_pg, "queues": queues,
            "no_drop": [int(x) for x in pm["pfc_enable"].split(",")], "pfcwd_on": pm.get("pfcwd_sw_enable"),
            "watchdog": {"detection": int(wd["detection_time"]), "restoration": int(wd["restoration_time"]),
                         "action": wd["action"], "poll": int(db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"])}}


def expected_dscp(q: dict) -> list[int]:
    out = [0] * 64
    out[q["roce_dscp"]], out[q["cnp_dscp"]] = q["roce_priority"], q["cnp_priority"]
    return out


def host_side(out: Path) -> dict:
    """What the hosts are told: PFC priorities, CNP DSCP and priority, NCCL's traffic class."""
    setup = (out / "host-groups" / "gpu" / "hca-setup.sh").read_text()
    pfc = set(re.findall(r"--pfc ([01](?:,[01]){7})", setup))
    env = dict(line.split("=", 1) for line in (out / "host-groups" / "gpu" / "nccl.env").read_text().splitlines()
               if line and not line.startswith("#"))
    return {"pfc": pfc, "cnp_dscp": set(re.findall(r"put (\d+) \"[^\"]*/cnp_dscp\"", setup)),
            "cnp_prio": set(re.findall(r"put (\d+) \"[^\"]*/cnp_802p_prio\"", setup)), "tc": env["NCCL_IB_TC"]}


def check_hosts_agree(out: Path, q: dict) -> None:
    h = host_side(out)
    assert h["pfc"] == {",".join("1" if p == q["roce_priority"] else "0" for p in range(8))}
    assert h["cnp_dscp"] == {str(q["cnp_dscp"])} and h["cnp_prio"] == {str(q["cnp_priority"])}
    assert h["tc"] == str(q["roce_dscp"] * 4 + 2)


def render(tmp_path: Path, platform: str, model: str, qos: dict) -> Path:
    inv = tmp_path / "inv.yaml"
    inv.write_text(INVENTORY.format(platform=platform, model=model, qos=json.dumps(qos)))
    out = tmp_path / "out"
    render_to(inv, out)
    return out


@pytest.mark.parametrize("qos", [QOS, {}], ids=["custom", "default"])
def test_eos_switch_files_carry_every_qos_value(qos: dict, tmp_path: Path) -> None:
    from fabgen.spec.schema import Qos

    q = Qos(**qos).model_dump()
    out = render(tmp_path, "eos", "arista-7060x5", qos)
    files = sorted((out / "f" / "switches").glob("*.cfg"))
    assert files
    for path in files:
        got = read_eos_qos(path.read_text())
        assert got["dscp"] == expected_dscp(q), path.name
        assert got["tc_queue"] == {q["roce_priority"]: q["roce_priority"], q["cnp_priority"]: q["cnp_priority"]}
        assert got["no_drop"] == [q["roce_priority"]]
        roce = got["queues"][q["roce_priority"]]
        assert roce["weight"] == q["roce_bandwidth_percent"]
        ecn = q["ecn"]
        assert roce["ecn"] == (ecn["min_threshold_kbytes"] * 1000, ecn["max_threshold_kbytes"] * 1000,
                               ecn["probability"])
        assert got["queues"][q["cnp_priority"]] == {"strict": True}
        wd = q["pfc_watchdog"]
        assert got["watchdog"] == {"timeout": f"{wd['detection_ms'] / 1000:g}",
                                   "recovery-time": f"{wd['restoration_ms'] / 1000:g}",
                                   "polling-interval": f"{wd['poll_interval_ms'] / 1000:g}", "action": "drop"}
    check_hosts_agree(out, q)


@pytest.mark.parametrize("qos", [QOS, {}], ids=["custom", "default"])
def test_sonic_switch_files_carry_every_qos_value(qos: dict, tmp_path: Path) -> None:
    from fabgen.spec.schema import Qos

    q = Qos(**qos).model_dump()
    out = render(tmp_path, "sonic", "sn5600-sonic", qos)
    files = sorted((out / "f" / "switches").glob("*/config_db.json"))
    assert files
    for path in files:
        got = read_sonic_qos(json.loads(path.read_text()))
        assert got["dscp"] == expected_dscp(q), path
        assert got["tc_queue"] == {tc: tc for tc in range(8)}
        assert got["tc_pg"] == {tc: (tc if tc == q["roce_priority"] else 0) for tc in range(8)}
        assert got["no_drop"] == [q["roce_priority"]] and got["pfcwd_on"] == str(q["roce_priority"])
        roce = got["queues"][q["roce_priority"]]
        assert roce["weight"] == q["roce_bandwidth_percent"]
        assert got["queues"][0]["weight"] == 100 - q["roce_bandwidth_percent"]
        ecn = q["ecn"]
        assert roce["ecn"] == (ecn["min_threshold_kbytes"] * 1000, ecn["max_threshold_kbytes"] * 1000,
                               ecn["probability"])
        assert got["queues"][q["cnp_priority"]] == {"strict": True}
        wd = q["pfc_watchdog"]
        assert got["watchdog"] == {"detection": wd["detection_ms"], "restoration": wd["restoration_ms"],
                                   "action": "drop", "poll": wd["poll_interval_ms"]}
    check_hosts_agree(out, q)


def test_the_readers_see_a_value_that_did_not_reach_the_switch(tmp_path: Path) -> None:
    """The readers are not a mirror of the intent: a config whose RoCE weight or watchdog differs
    from the inventory's fails the comparison."""
    out = render(tmp_path, "eos", "arista-7060x5", QOS)
    path = sorted((out / "f" / "switches").glob("*.cfg"))[0]
    text = path.read_text().replace("bandwidth percent 60", "bandwidth percent 50")
    assert read_eos_qos(text)["queues"][4]["weight"] == 50
    text = text.replace("recovery-time 0.4", "recovery-time 0.2")
    assert read_eos_qos(text)["watchdog"]["recovery-time"] == "0.2"


@pytest.mark.parametrize("platform,model", [("eos", "arista-7060x5"), ("sonic", "sn5600-sonic")])
def test_a_watchdog_turned_off_is_off_on_the_switch(platform: str, model: str, tmp_path: Path) -> None:
    out = render(tmp_path, platform, model, {"pfc_watchdog": {"enabled": False}})
    if platform == "eos":
        texts = [p.read_text() for p in sorted((out / "f" / "switches").glob("*.cfg"))]
        assert texts and not any("watchdog" in t for t in texts)
    else:
        dbs = [json.loads(p.read_text()) for p in sorted((out / "f" / "switches").glob("*/config_db.json"))]
        assert dbs and not any(db.get("PFC_WD") for db in dbs)
        assert not any("pfcwd_sw_enable" in v for db in dbs for v in db["PORT_QOS_MAP"].values())
