"""`fabgen compare`: the published 8-node comparison reproduced, every option's counts equal to what
`render` writes for that choice, prices and estimates as documented, the JSON keys pinned."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import INVENTORIES, ROOT
from fabgen.cli import app
from fabgen.compare import compare
from fabgen.compare.prices import PriceList, read
from fabgen.pipeline import run

PUBLISHED_PRICES = ROOT / "tests" / "data" / "prices-published-8node.yaml"
EIGHT = INVENTORIES / "compare-8node.yaml"
EIGHT_BOUGHT = Path(__file__).parent / "data" / "compare-8node-bought-nics.yaml"
COMPARE_GOLDEN = ROOT / "tests" / "compare-golden"  # beside golden/, whose folders are one per example


def _cli(*args: str):
    return CliRunner().invoke(app, ["compare", *map(str, args)])


def _options(data: dict, fabric: str = "compute") -> dict[tuple[str, str, str], dict]:
    return {(o["kind"], o["platform"], o["switch_model"]): o for o in data["fabrics"][fabric]["options"]}


def test_published_eight_node_comparison_is_reproduced() -> None:
    """InfiniBand NDR ~$490K, Spectrum-X ~$317K, RoCEv2 ~$175K for 64 GPUs; over 36 months about
    $213, $138 and $76 per GPU-month, $0.29, $0.19 and $0.10 per GPU-hour (within 5%). The published
    build buys its NICs with the fabric: servers whose NICs do not ship inside them."""
    prices, name = read(PUBLISHED_PRICES)
    data = compare(EIGHT_BOUGHT, prices, name, months=36)
    opts = _options(data)
    published = {("infiniband", "ufm", "qm9700"): (490_000, 213, 0.29),
                 ("spectrum-x", "nvue", "sn5600"): (317_000, 138, 0.19),
                 ("roce", "eos", "arista-7060x5"): (175_000, 76, 0.10)}
    for key, (total, month, hour) in published.items():
        c = opts[key]["cost"]
        assert c["complete"], (key, c["missing"])
        assert c["total"] == pytest.approx(total, rel=0.05), key
        assert c["per_gpu_month"] == pytest.approx(month, rel=0.05), key
        # the published per-hour figures have two decimals: within 5% or their rounding
        assert c["per_gpu_hour"] == pytest.approx(hour, rel=0.05, abs=0.005), key
        # the formulas as stated: total / GPUs / months / 730
        assert c["per_gpu_month"] == pytest.approx(c["total"] / 64 / 36, abs=0.01)
        assert c["per_gpu_hour"] == pytest.approx(c["total"] / 64 / 36 / 730, abs=1e-4)
    assert opts[("infiniband", "ufm", "qm9700")]["current"]  # the inventory's own choice is marked
    for o in opts.values():  # one switch each, every port of the 64 NICs cabled once
        assert o["switches"]["total"] == 1 and o["links"]["node-leaf"] == 64 and o["tiers"] == 1


def test_missing_prices_are_listed_never_guessed() -> None:
    """An option whose switch is unpriced has no total, no per-GPU figures and no rank; the
    priced options are ranked by cost per GPU-hour."""
    prices, name = read(PUBLISHED_PRICES)
    opts = _options(compare(EIGHT_BOUGHT, prices, name))
    qm9790 = opts[("infiniband", "ufm", "qm9790")]
    c = qm9790["cost"]
    assert not c["complete"] and c["missing"] == ["MQM9790-NS2F"] and not c["switches_priced"]
    line = next(x for x in c["lines"] if x["part"] == "MQM9790-NS2F")
    assert line["unit_price"] is None and line["amount"] is None
    assert not c["priced"] and c["total"] is None and c["per_gpu"] is None and c["per_gpu_hour"] is None
    assert qm9790["rank"] is None
    # what is priced is kept as a subtotal: the NICs, cables and optics, never a guessed switch
    assert c["priced_subtotal"] == pytest.approx(opts[("infiniband", "ufm", "qm9700")]["cost"]["total"] - 65_000)
    priced = sorted((o for o in opts.values() if o["cost"]["priced"]), key=lambda o: o["cost"]["per_gpu_hour"])
    assert [o["rank"] for o in priced] == list(range(1, len(priced) + 1)) and len(priced) >= 3
    result = _cli(EIGHT_BOUGHT, "--prices", PUBLISHED_PRICES)
    assert result.exit_code == 0, result.output
    assert "not priced: MQM9790-NS2F" in result.output
    assert "Not priced (no total, rank or chart point): infiniband / ufm / qm9790: switches unpriced" in result.output


def test_an_option_mostly_unpriced_is_not_totalled_even_with_its_switch_priced(tmp_path: Path) -> None:
    """The switch priced but its optics and fibres not (more than 10% of the BOM): no total."""
    prices = tmp_path / "p.yaml"
    prices.write_text("currency: USD\nprices:\n  - {part: MQM9700-NS2F, price: 1}\n")
    data = compare(EIGHT_BOUGHT, read(prices)[0], "p")
    o = _options(data)[("infiniband", "ufm", "qm9700")]
    assert o["cost"]["switches_priced"] and not o["cost"]["priced"] and o["cost"]["total"] is None
    assert 0 < o["cost"]["priced_share"] < 0.9 and o["rank"] is None


def test_the_prices_template_lists_every_part_and_a_filled_one_prices_every_option(tmp_path: Path) -> None:
    tpl = tmp_path / "tpl.yaml"
    result = _cli(INVENTORIES / "superpod-cluster.yaml", "--prices-template", tpl, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    needed = {line["part"] for f in data["fabrics"].values() for o in f["options"] for line in o["cost"]["lines"]}
    listed = yaml.safe_load(tpl.read_text())["prices"]
    assert {e["part"] for e in listed} == needed and all(e["price"] is None for e in listed)
    prices, _ = read(tpl)  # as written: a valid price list that prices nothing
    assert all(not o["cost"]["priced"] for o in compare(INVENTORIES / "superpod-cluster.yaml", prices, "t")
               ["fabrics"]["compute"]["options"])
    filled = tpl.read_text().replace("price: null", "price: 10")
    tpl.write_text(filled)
    done = compare(INVENTORIES / "superpod-cluster.yaml", read(tpl)[0], "t")
    for f in done["fabrics"].values():
        assert all(o["cost"]["complete"] and o["cost"]["priced"] and o["rank"] for o in f["options"])


def test_labels_are_distinct_and_only_the_compute_fabric_gets_an_allreduce_estimate(tmp_path: Path) -> None:
    inv = tmp_path / "b300.yaml"
    inv.write_text(UNSEEN_B300)
    data = compare(inv, *read(None))
    labels = [o["label"] for o in data["fabrics"]["f"]["options"]]
    assert len(labels) == len(set(labels)) and any(" / 2 planes" in x for x in labels)
    cluster = compare(INVENTORIES / "superpod-cluster.yaml", *read(None))
    for name, f in cluster["fabrics"].items():
        estimated = [o["estimate"]["allreduce_seconds"] is not None for o in f["options"]]
        assert all(estimated) if f["role"] == "compute" else not any(estimated), name
    from fabgen.compare.output import to_text
    text = to_text(cluster)
    storage = text[text.index("storagenet:"):]
    assert "all-reduce" not in storage.split("Prices:")[0]


def test_a_wide_table_is_shown_a_few_options_at_a_time_in_a_narrow_terminal() -> None:
    from fabgen.compare.output import to_text

    data = compare(INVENTORIES / "superpod-cluster.yaml", *read(None))
    wide = to_text(data)
    narrow = to_text(data, columns=100)
    assert max(map(len, wide.splitlines())) > 200
    table_lines = [line for line in narrow.split("Prices:")[0].splitlines() if " nodes, " not in line]
    assert max(map(len, table_lines)) <= 100
    for f in data["fabrics"].values():
        for o in f["options"]:
            assert o["label"].split(" / ")[0] in narrow


def test_a_kind_specific_price_wins_over_the_general_one() -> None:
    pl = PriceList.model_validate({"currency": "EUR", "prices": [
        {"part": "X", "price": 1}, {"part": "X", "kind": "roce", "price": 2}]})
    assert pl.lookup("X", "roce").price == 2
    assert pl.lookup("X", "infiniband").price == 1
    assert pl.lookup("Y", "roce") is None


UNSEEN = """
version: 1
cluster: unseen
node_groups:
  - {name: gpu, model: dgx-b200, count: 40, hostname: "g{n:03d}"}
  - {name: store, model: fs, count: 3, role: storage}
node_models:
  fs: {gpus: 0, nics: [{rdma: mlx5_0, speed: 400}, {rdma: mlx5_1, speed: 400}], part: FS-1}
fabrics:
  - name: f
    kind: roce
    platform: eos
    topology: rail-optimized
    scalable_unit: 16
    switch_model: arista-7060x5
    node_groups: [gpu, store]
    ethernet: {asn: {leaf: 65100, spine: 65000, core: 64900}}
    management: 192.168.0.0/24
"""


def _render_choice(tmp_path: Path, text: str, option: dict) -> dict[str, bytes]:
    """The inventory with the option's kind, platform and switch model, rendered for real."""
    data = yaml.safe_load(text)
    fab = data["fabrics"][0]
    for key in ("infiniband", "ethernet", "platform_version", "management"):
        fab.pop(key, None)
    fab.update(kind=option["kind"], platform=option["platform"], switch_model=option["switch_model"])
    path = tmp_path / f"{option['kind']}-{option['platform']}-{option['switch_model']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return run(path).files


def test_every_option_counts_what_render_writes_for_that_choice(tmp_path: Path) -> None:
    inv = tmp_path / "unseen.yaml"
    inv.write_text(UNSEEN)
    prices, name = read(None)
    data = compare(inv, prices, name)
    opts = data["fabrics"]["f"]["options"]
    assert {(o["kind"], o["platform"]) for o in opts} == {
        ("infiniband", "ufm"), ("roce", "eos"), ("roce", "sonic"), ("spectrum-x", "nvue")}
    assert len(opts) == 6  # qm9700, qm9790, 7060X5, 7060X6, SN5600 (SONiC), SN5600 (NVUE)
    for o in opts:
        files = _render_choice(tmp_path, UNSEEN, o)
        bom = list(csv.DictReader(io.StringIO(files["f/bom.csv"].decode())))
        by = Counter()
        for row in bom:
            by[(row["category"], row["part"])] += int(row["quantity"])
        assert by[("switch", o["switch_part"])] == o["switches"]["total"], o["switch_model"]
        for category, key in (("cable", "cables"), ("transceiver", "transceivers"), ("nic", "nics"),
                              ("included", "nics_included")):
            mine = Counter()
            for part, n in o[key].items():
                mine[(category, part)] += n
            assert mine == Counter({k: v for k, v in by.items() if k[0] == category}), (o["switch_model"], key)
        report = json.loads(files["report.json"])["fabrics"]["f"]
        assert report["switches"] == {k: v for k, v in o["switches"].items() if k != "total"}
        assert report["links"] == o["links"]
        assert report["bisection_bandwidth_gbps"] == o["bisection_bandwidth_gbps"]
        assert report["switch_ports"] == o["switch_ports"]
        cabling = files["f/cabling.csv"].decode().splitlines()[1:]
        assert len(cabling) == sum(o["links"].values())
        # the cost is the price list applied to exactly these rows
        priced = sum(line["amount"] for line in o["cost"]["lines"] if line["amount"] is not None)
        assert o["cost"]["priced_subtotal"] == pytest.approx(priced)
        assert o["cost"]["total"] in (None, o["cost"]["priced_subtotal"])
        assert sum(line["quantity"] for line in o["cost"]["lines"]) == sum(int(r["quantity"]) for r in bom
                                                                          if r["category"] != "included")


UNSEEN_B300 = """version: 1
cluster: b300
node_groups:
  - {name: gpu, model: dgx-b300, count: 24}
fabrics:
  - name: f
    kind: roce
    platform: eos
    topology: fat-tree
    switch_model: arista-7060x5
    node_groups: [gpu]
    planes: 2
"""


def test_plane_counts_are_options_and_count_what_render_writes(tmp_path: Path) -> None:
    """Nodes whose NICs split (DGX B300, 8 x 800G) get 1, 2 and 4 planes wherever the switch has
    ports at the split speed; every option, rendered for real with its plane count, has the
    switches, links and bill of materials the comparison says, summed over its planes; a NIC's
    bandwidth is the same however it is split."""
    inv = tmp_path / "b300.yaml"
    inv.write_text(UNSEEN_B300)
    prices, name = read(None)
    opts = compare(inv, prices, name)["fabrics"]["f"]["options"]
    seen = {(o["kind"], o["switch_model"], o["planes"], o["link_speed_gbps"]) for o in opts}
    assert ("infiniband", "q3400", 1, 800) in seen and ("spectrum-x", "sn5600", 1, 800) in seen
    assert {("spectrum-x", "sn5600", 2, 400), ("spectrum-x", "sn5600", 4, 200), ("roce", "arista-7060x5", 2, 400),
            ("roce", "arista-7060x5", 4, 200)} <= seen
    assert not any(o["kind"] == "infiniband" and o["planes"] > 1 for o in opts)
    assert [o["current"] for o in opts].count(True) == 1
    assert len({o["estimate"]["busbw_per_gpu_gbs"] for o in opts if o["kind"] == "spectrum-x"}) == 1
    for o in (o for o in opts if o["switch_model"] in ("sn5600", "arista-7060x5")):
        data = yaml.safe_load(UNSEEN_B300)
        fab = data["fabrics"][0]
        fab.update(kind=o["kind"], platform=o["platform"], switch_model=o["switch_model"])
        fab.pop("planes")
        if o["planes"] > 1:
            fab["planes"] = o["planes"]
        path = tmp_path / f"{o['switch_model']}-{o['planes']}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        files = run(path).files
        report = json.loads(files["report.json"])["fabrics"]
        assert len(report) == o["planes"]
        assert {k: sum(r["switches"][k] for r in report.values()) for k in ("leaf", "spine", "core")} == \
            {k: v for k, v in o["switches"].items() if k != "total"}
        assert {k: sum(r["links"][k] for r in report.values()) for k in o["links"]} == o["links"]
        bom = [row for p in files if p.endswith("/bom.csv") for row in csv.DictReader(io.StringIO(files[p].decode()))]
        bought = [r for r in bom if r["category"] != "included"]  # NICs that ship in the nodes: never priced
        assert sum(int(r["quantity"]) for r in bought) == sum(line["quantity"] for line in o["cost"]["lines"])


UNSEEN_GB300 = """version: 1
cluster: gb
node_groups:
  - {name: gb, model: gb300-nvl72, count: 36}
fabrics:
  - name: f
    kind: infiniband
    platform: opensm
    topology: rail-optimized
    switch_model: q3400
    node_groups: [gb]
"""


def test_trays_get_their_plane_counts_and_the_superpod_unit(tmp_path: Path) -> None:
    """GB300 trays (4 x ConnectX-8) split into two planes and never four; NVL72 trays on a
    rail-optimized fabric are also offered NVIDIA's 8-rack unit, and that option is what render
    builds with scalable_unit: 144 (spine-leaf groups, here two tiers: one unit)."""
    inv = tmp_path / "gb.yaml"
    inv.write_text(UNSEEN_GB300)
    prices, name = read(None)
    data = compare(inv, prices, name)["fabrics"]["f"]
    opts = data["options"]
    sx = {(o["planes"], o["scalable_unit"]) for o in opts if o["switch_model"] == "sn5600"}
    assert sx == {(1, 18), (1, 144), (2, 54), (2, 144)}  # a leaf's most whole racks, or eight racks
    assert not any(o["planes"] == 4 for o in opts)
    unit = next(o for o in opts if o["switch_model"] == "q3400" and o["scalable_unit"] == 144)
    assert unit["leaves_per_rail"] == 2 and not unit["current"]  # four racks per leaf of 144 XDR ports
    rendered = yaml.safe_load(UNSEEN_GB300)
    rendered["fabrics"][0]["scalable_unit"] = 144
    path = tmp_path / "su.yaml"
    path.write_text(yaml.safe_dump(rendered, sort_keys=False))
    report = json.loads(run(path).files["report.json"])["fabrics"]["f"]
    assert {k: report["switches"][k] for k in ("leaf", "spine", "core")} == \
        {k: v for k, v in unit["switches"].items() if k != "total"}
    text = CliRunner().invoke(app, ["compare", str(inv)]).output
    assert "144 nodes, 2 leaves per rail" in text and "Not an option" not in text  # every choice fits


def test_estimates_follow_the_stated_formula(tmp_path: Path) -> None:
    inv = tmp_path / "two-tier.yaml"
    inv.write_text(UNSEEN.replace("scalable_unit: 16", "scalable_unit: 16\n    oversubscription: 1"))
    prices, name = read(None)
    data = compare(inv, prices, name, message_bytes=8e9)
    opts = _options(data, "f")
    eos = opts[("roce", "eos", "arista-7060x5")]
    assert eos["tiers"] == 2 and eos["switch_hops"] == 3
    assert eos["estimate"]["latency_class"] == "3 switch hops; PFC pause frames and ECN, static ECMP paths"
    # 400G / 8 x 1 NIC per GPU x 0.94 x 0.60 (ECMP) / 1:1
    assert eos["estimate"]["busbw_per_gpu_gbs"] == pytest.approx(50 * 0.94 * 0.60, abs=0.01)
    sx = opts[("spectrum-x", "nvue", "sn5600")]
    assert sx["estimate"]["busbw_per_gpu_gbs"] == pytest.approx(50 * 0.94 * 0.95, abs=0.01)
    ib = opts[("infiniband", "ufm", "qm9700")]
    per_node = 50 * 0.94 * 8
    n = 320
    assert ib["estimate"]["allreduce_seconds"] == pytest.approx(8e9 * 2 * (n - 1) / n / (per_node * 1e9), rel=1e-4)
    assert ib["estimate"]["allreduce_seconds_sharp"] == pytest.approx(8e9 / (per_node * 1e9), rel=1e-4)
    assert eos["estimate"]["allreduce_seconds_sharp"] is None
    # an assumed efficiency is replaced on request, and only that one
    again = _options(compare(inv, prices, name, message_bytes=8e9, efficiency={"roce": 0.9}), "f")
    assert again[("roce", "eos", "arista-7060x5")]["estimate"]["busbw_per_gpu_gbs"] == pytest.approx(50 * 0.94 * 0.9,
                                                                                                     abs=0.01)
    assert again[("spectrum-x", "nvue", "sn5600")]["estimate"] == sx["estimate"]
    # what each needs that the others do not
    assert "subnet manager on a host (UFM or OpenSM)" in ib["needs_only_this"]
    assert "PFC and ECN tuned alike on every switch and NIC" not in sx["needs_only_this"]  # RoCE needs it too
    assert "adaptive routing on the switches" in sx["needs_only_this"]


def test_oversubscription_lowers_the_estimate(tmp_path: Path) -> None:
    inv = tmp_path / "os.yaml"
    inv.write_text(UNSEEN.replace("scalable_unit: 16", "scalable_unit: 16\n    oversubscription: 2"))
    prices, name = read(None)
    ib = _options(compare(inv, prices, name), "f")[("infiniband", "ufm", "qm9700")]
    assert ib["oversubscription"]["leaf"] == 2.0
    assert ib["estimate"]["busbw_per_gpu_gbs"] == pytest.approx(50 * 0.94 / 2, abs=0.01)


BIG = """
version: 1
cluster: big
node_groups: [{name: gpu, model: dgx-h100, count: 300}]
fabrics:
  - {name: f, kind: roce, platform: sonic, topology: rail-optimized, tiers: 2, switch_model: sn5600-sonic,
     node_groups: [gpu]}
"""


def test_choices_that_cannot_carry_the_nodes_say_why(tmp_path: Path) -> None:
    inv = tmp_path / "big.yaml"
    inv.write_text(BIG)
    prices, name = read(None)
    data = compare(inv, prices, name)
    fab = data["fabrics"]["f"]
    ok = {(o["kind"], o["switch_model"]) for o in fab["options"]}
    refused = {(n["kind"], n["switch_model"]): n["reason"] for n in fab["not_options"]}
    # 2,400 NICs exceed two tiers of 64-port switches but fit 128 x 400G
    assert ("roce", "arista-7060x5") in refused and "two tiers" in refused[("roce", "arista-7060x5")]
    assert ("infiniband", "qm9700") in refused
    assert ("spectrum-x", "sn5600") in ok and ("roce", "sn5600-sonic") in ok
    text = _cli(inv).output
    assert "Not an option: roce / eos / arista-7060x5: two tiers" in text


def test_only_switches_with_ports_at_the_nic_speed_are_options(tmp_path: Path) -> None:
    inv = tmp_path / "100g.yaml"
    inv.write_text("""
version: 1
cluster: small
node_groups: [{name: gpu, model: box, count: 4}]
node_models:
  box: {gpus: 4, nics: [{rdma: mlx5_0, speed: 100}, {rdma: mlx5_1, speed: 100}]}
fabrics:
  - {name: f, kind: roce, platform: eos, topology: fat-tree, switch_model: arista-7060x5, node_groups: [gpu]}
""")
    prices, name = read(None)
    data = compare(inv, prices, name)
    # the SN5600 splits a cage 8 x 100G (NVIDIA's csl-01 at 993eed6: `link breakout 8x`); the SONiC SKUs run 400G only
    assert [(o["kind"], o["switch_model"]) for o in data["fabrics"]["f"]["options"]] == [
        ("roce", "arista-7060x5"), ("spectrum-x", "sn5600")]
    o = data["fabrics"]["f"]["options"][0]
    assert o["cost"]["missing"] == ["compute NIC", "transceiver"]  # a custom node's parts have no price
    assert o["estimate"]["busbw_per_gpu_gbs"] == pytest.approx(12.5 * 2 / 4 * 0.94, abs=0.01)


def _shape(value):
    """The JSON's keys and value types (lists by their items' merged shape): what a consumer relies on."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_shape(v) for v in value]
        merged = items[0] if items else set()
        for item in items[1:]:
            merged = _merge(merged, item)
        return [merged]
    return {"null" if value is None else type(value).__name__}


def _merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _merge(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k)) for k in {*a, *b}}
    if isinstance(a, list) and isinstance(b, list):
        return [_merge(a[0], b[0])]
    return set(a) | set(b)


def _plain(shape):
    if isinstance(shape, dict):
        return {k: _plain(v) for k, v in sorted(shape.items())}
    if isinstance(shape, list):
        return [_plain(shape[0])]
    return " | ".join(sorted(shape)) or "(no example)"


def _golden(name: str, text: str, update: bool) -> None:
    path = COMPARE_GOLDEN / name
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"tests/compare-golden/{name} is missing: run pytest --update-golden and review it"
    assert text == path.read_text()


def test_json_keys_are_pinned(update_golden: bool, tmp_path: Path) -> None:
    """Keys and value types over two comparisons that between them show every field filled and
    empty: options with and without missing prices, with SHARP and without, refused choices."""
    big = tmp_path / "big.yaml"
    big.write_text(BIG)
    shapes = []
    for inv in (EIGHT, big):
        result = _cli(inv, "--format", "json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        for fab in data["fabrics"].values():
            for o in fab["options"]:  # maps keyed by part names are data, not keys a consumer names
                for key in ("cables", "transceivers", "nics", "nics_included"):
                    o[key] = {"<bom part>": next(iter(o[key].values()))} if o[key] else {}
        shape = _shape(data)
        fabrics = list(shape["fabrics"].values())
        merged = fabrics[0]
        for other in fabrics[1:]:
            merged = _merge(merged, other)
        shape["fabrics"] = {"<fabric name>": merged}
        shapes.append(shape)
    _golden("schema.json", json.dumps(_plain(_merge(*shapes)), indent=2) + "\n", update_golden)


def test_markdown_is_golden(update_golden: bool) -> None:
    result = _cli(EIGHT_BOUGHT.relative_to(ROOT), "--format", "markdown", "--prices",
                  PUBLISHED_PRICES.relative_to(ROOT))
    assert result.exit_code == 0, result.output
    _golden("compare-8node.md", result.output, update_golden)
    assert result.output.count("| ") > 20 and "| capital cost (estimate) | $489,960 |" in result.output


def test_chart_is_a_valid_deterministic_svg_with_every_option(tmp_path: Path) -> None:
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    for path in (a, b):
        result = _cli(EIGHT, "--chart", path, "--format", "json")
        assert result.exit_code == 0, result.output
    assert a.read_bytes() == b.read_bytes()
    root = ET.fromstring(a.read_bytes())
    assert root.tag.endswith("svg")
    texts = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
    for label in ("qm9700", "qm9790", "arista-7060x5", "sn5600", "per GPU-hour"):
        assert label in texts, label
    png = tmp_path / "c.png"
    assert _cli(EIGHT, "--chart", png).exit_code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_chart_parser_rejects_a_broken_svg(tmp_path: Path) -> None:
    path = tmp_path / "a.svg"
    assert _cli(EIGHT, "--chart", path).exit_code == 0
    broken = path.read_bytes().replace(b"</svg>", b"")
    with pytest.raises(ET.ParseError):
        ET.fromstring(broken)


BAD_PRICES = {
    "unknown-key": ("currency: USD\nprices:\n  - {part: A, prise: 3}\n", "prices.yaml:3:", "unknown key 'prise'"),
    "negative": ("currency: USD\nprices:\n  - part: A\n    price: -3\n", "prices.yaml:4:12:",
                 "must be at least 0"),
    "twice": ("currency: USD\nprices:\n  - {part: A, price: 1}\n  - {part: A, price: 2}\n", "prices.yaml:4:5:",
              "priced twice"),
    "currency": ("currency: dollars\nprices: []\n", "prices.yaml:1:11:", "currency"),
    "not-yaml": ("currency: [USD\n", "prices.yaml:", ""),
    "kind": ("currency: USD\nprices:\n  - {part: A, price: 1, kind: ethernet}\n", "prices.yaml:3:", "ethernet"),
}


@pytest.mark.parametrize("case", sorted(BAD_PRICES))
def test_a_bad_price_list_is_a_located_error(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text, where, words = BAD_PRICES[case]
    monkeypatch.chdir(tmp_path)
    Path("prices.yaml").write_text(text)
    chart = tmp_path / "chart.svg"
    result = _cli(EIGHT, "--prices", "prices.yaml", "--chart", chart)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(where) and words in result.stderr, result.stderr
    assert not chart.exists()


@pytest.mark.parametrize("args,words", [
    (["--format", "csv"], "--format must be table, markdown or json"),
    (["--allreduce", "lots"], "is not a size"),
    (["--efficiency", "roce=2"], "at most 1"),
    (["--efficiency", "ethernet=0.5"], "KIND=VALUE"),
    (["--chart", "x.pdf"], ".svg or .png"),
    (["--months", "0"], "greater than or equal to 1"),
])
def test_bad_options_exit_2_without_a_traceback(args: list[str], words: str) -> None:
    result = _cli(EIGHT, *args)
    assert result.exit_code == 2, result.output
    assert words in result.output and "Traceback" not in result.output


def test_a_bad_inventory_is_located_and_nothing_is_written(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(EIGHT.read_text().replace("count: 8", "count: -1"))
    chart = tmp_path / "c.svg"
    result = _cli(bad, "--chart", chart)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{bad}:11:12: node_groups[0].count: must be at least 1")
    assert not chart.exists()


def test_the_built_in_price_list_names_a_source_for_every_figure() -> None:
    prices, name = read(None)
    assert prices.estimate and name == "built-in estimates" and prices.prices
    assert all(p.source for p in prices.prices)


@pytest.mark.parametrize("case", sorted(p.stem for p in INVENTORIES.glob("*.yaml")))
def test_the_inventorys_own_choice_counts_what_its_golden_render_holds(case: str) -> None:
    """Every example: exactly one option is the inventory's own, and its counts are the golden
    report.json and bom.csv (kind-specific keys left out of the option change no count)."""
    from conftest import GOLDEN

    prices, name = read(None)
    data = compare(INVENTORIES / f"{case}.yaml", prices, name)
    report = json.loads((GOLDEN / case / "report.json").read_text())["fabrics"]
    for fabric, f in data["fabrics"].items():
        mine = [o for o in f["options"] if o["current"]]
        assert len(mine) == 1, (fabric, [o["switch_model"] for o in mine])
        o = mine[0]
        planes = [name for name, r in report.items() if r.get("network_plane", {}).get("fabric") == fabric] or [fabric]

        def total(key: str, planes: list[str] = planes) -> dict[str, int]:
            return {k: sum(report[p][key][k] for p in planes) for k in report[planes[0]][key]}
        assert total("switches") == {k: v for k, v in o["switches"].items() if k != "total"}
        assert total("links") == o["links"]
        assert total("switch_ports") == o["switch_ports"]
        bom = [r for p in planes for r in csv.DictReader(io.StringIO((GOLDEN / case / p / "bom.csv").read_text()))]
        bought = [r for r in bom if r["category"] != "included"]  # NICs that ship in the nodes: never priced
        assert sum(int(r["quantity"]) for r in bought) == sum(line["quantity"] for line in o["cost"]["lines"])


def test_options_without_gpus_rank_by_total(tmp_path: Path) -> None:
    """A fabric of nodes without GPUs has no per-GPU figure: its priced options rank by total."""
    from fabgen.compare.cost import rank

    opts = [{"cost": {"priced": True, "per_gpu_hour": None, "total": t}} for t in (300.0, 100.0, 200.0)]
    opts.append({"cost": {"priced": False, "per_gpu_hour": None, "total": None}})
    rank(opts)
    assert [o["rank"] for o in opts] == [3, 1, 2, None]


def test_the_built_in_list_prices_the_roce_options_of_a_400g_fat_tree() -> None:
    """[A]'s per-link figures cover multimode and DR4 RoCE links: the bundled 400G fat-tree's EOS and
    SONiC-on-SN5600 options are priced and ranked; the 7060X6 (no figure for it) is not."""
    data = compare(INVENTORIES / "fattree-2to1.yaml", *read(None))
    by = {o["switch_model"]: o for o in data["fabrics"]["fabric"]["options"]}
    assert by["arista-7060x5"]["rank"] and by["sn5600-sonic"]["rank"] and by["qm9700"]["rank"]
    assert by["arista-7060x6-64pe-b"]["rank"] is None
    assert "DCS-7060X6-64PE-B" in by["arista-7060x6-64pe-b"]["cost"]["missing"]


def test_what_a_plan_buys_later_is_priced_apart(tmp_path: Path) -> None:
    """`cost` prices what is bought now (bom.csv); with planned_nodes each option's `cost_later`
    prices bom-later.csv's rows (the inventory's own option: the rows render writes), never added
    to `cost`, and the table has a row for it. Without a plan `cost_later` is null and the row
    absent."""
    from test_growth import inventory

    path = tmp_path / "plan.yaml"
    path.write_text(inventory("eos", "rail-optimized", 8, 24, tiers=2))
    prices, name = read(None)
    data = compare(path, prices, name)
    opts = data["fabrics"]["f"]["options"]
    assert all(o["cost_later"] is not None for o in opts)
    (mine,) = [o for o in opts if o["current"]]
    files = run(path).files

    def table(rows) -> Counter:  # a part may have a row per tier: summed
        out: Counter = Counter()
        for r in rows:
            if r["category"] != "included":
                out[(r["category"], r["part"])] += int(r["quantity"])
        return out

    def csv_rows(name: str) -> list[dict]:
        return list(csv.DictReader(io.StringIO(files[name].decode())))

    lines = table(mine["cost_later"]["lines"])
    assert lines == table(csv_rows("f/bom-later.csv")) and lines
    now = table(mine["cost"]["lines"])
    assert now == table(csv_rows("f/bom.csv"))
    priced = {x["part"]: x["unit_price"] for x in mine["cost"]["lines"] + mine["cost_later"]["lines"]}
    assert mine["cost"]["priced_subtotal"] == pytest.approx(sum(n * (priced[p] or 0) for (_, p), n in now.items()))
    assert "bought later, as the plan fills" in _cli(path).output
    path.write_text(inventory("eos", "rail-optimized", 8, None, tiers=2))
    unplanned = compare(path, prices, name)["fabrics"]["f"]["options"]
    assert all(o["cost_later"] is None for o in unplanned)
    assert "bought later" not in _cli(path).output
