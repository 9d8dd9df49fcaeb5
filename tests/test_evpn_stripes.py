"""The EVPN lab's reading of which leaves share a node, for leaf pairs and for a northsouth fabric
sized by racks, whose nodes are striped over its leaves (node n on leaves n and n + 1): each
segment is checked against its own node's other leaf, and the leaves taken down together leave
every node a leg. Pure functions on a plan; the lab itself runs in test_emulate."""

from __future__ import annotations

from fabgen.emulate.evpn import Plan, Switch, leaves_to_fail, partners, segments_found


def _plan(legs: dict[str, list[str]]) -> Plan:
    """A plan whose node N has a leg on each leaf named, leaf port swp<k> in order of cabling."""
    ports: dict[str, int] = {}
    out: dict[str, list[tuple[str, str, str]]] = {}
    for node, leaves in legs.items():
        for leaf in leaves:
            ports[leaf] = ports.get(leaf, 0) + 1
            out.setdefault(node, []).append((f"p{len(out.get(node, []))}", leaf, f"swp{ports[leaf]}"))
    return Plan("ns", {}, {}, out, [])


def _striped(nodes: int, leaves: int) -> Plan:
    return _plan({f"n{k:02d}": [f"leaf{k % leaves}", f"leaf{(k + 1) % leaves}"] for k in range(nodes)})


def test_a_leaf_pair_has_one_partner_and_one_leaf_of_it_goes_down() -> None:
    plan = _plan({"a": ["l1", "l2"], "b": ["l1", "l2"], "c": ["l3", "l4"]})
    assert partners(plan) == {("l1", "swp1"): "l2", ("l2", "swp1"): "l1", ("l1", "swp2"): "l2",
                              ("l2", "swp2"): "l1", ("l3", "swp1"): "l4", ("l4", "swp1"): "l3"}
    assert leaves_to_fail(plan) == {"l1", "l3"}


def test_striped_nodes_have_a_partner_per_neighbour_and_every_node_keeps_a_leg() -> None:
    for nodes, leaves in ((7, 7), (14, 7), (8, 4), (9, 3), (5, 2)):
        plan = _striped(nodes, leaves)
        down = leaves_to_fail(plan)
        assert down, (nodes, leaves)
        for node, legs in plan.legs.items():
            assert {leaf for _, leaf, _ in legs} - down, (node, down)  # a leg left
        # as many nodes as possible lose a leg: every other leaf of the ring (an odd ring one fewer)
        assert len(down) == leaves // 2, (nodes, leaves, down)
        mates = partners(plan)
        assert mates[("leaf1", "swp1")] in {"leaf0", f"leaf{2 % leaves}"}
        assert {mates[(leaf, port)] for _, leaf, port in plan.legs["n01"]} == {"leaf1", f"leaf{2 % leaves}"}


def test_a_segment_is_checked_against_its_own_nodes_other_leaf() -> None:
    sw = Switch("leaf1", vtep="10.0.0.1",
                segments={"bond1": ("swp1", 1, "44:38:39:ff:00:ac", [300]),
                          "bond2": ("swp2", 2, "44:38:39:ff:00:ac", [300])})
    es = [{"esi": "03:44:38:39:ff:00:ac:00:00:01", "vteps": [{"vtep": "10.0.0.0"}]},
          {"esi": "03:44:38:39:ff:00:ac:00:00:02", "vteps": [{"vtep": "10.0.0.2"}]}]
    assert segments_found(es, sw, {"bond1": "10.0.0.0", "bond2": "10.0.0.2"}) == []
    # one partner for the whole leaf (what the lab assumed before stripes) finds a false fault
    wrong = segments_found(es, sw, {"bond1": "10.0.0.2", "bond2": "10.0.0.2"})
    assert len(wrong) == 1 and wrong[0].startswith("bond1:") and "10.0.0.2" in wrong[0]
    assert segments_found(es, sw, {"bond1": ""}) == []  # the other leaf down: the segment alone
    assert segments_found(es[:1], sw, {})[0].startswith("bond2: segment 03:44:38:39:ff:00:ac:00:00:02 not in FRR")
