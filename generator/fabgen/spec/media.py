"""The physical layer: which cable and which transceivers carry each tier of a fabric.

Every switch model belongs to a media family (its cages and lane rate); a family offers media,
each with a reach to another switch and to a node and the parts it takes: the transceiver in a
switch cage, the one in a node's cage (by the node cage's form) and the cable. A tier's medium is
the one the inventory names (`fabrics[].cabling.<tier>.media`), else the first of the family's
media, cheapest first (copper, then multimode, then single-mode), that reaches the tier's
length: the inventory's `length_m`, else DEFAULT_LENGTH_M (docs/hardware.md, "Cables and
optics").

Sources (read 2026-11):
- NVIDIA LinkX 100G-PAM4 guide (docs.nvidia.com/networking/display/400g100gpam4ovpub) and its
  copper page: passive DAC "up to 2-meters" switch to switch (MCP4Y10-Nxxx, 0.5-2 m); linear
  active copper (LACC) twin-port 800G switch to switch at 3, 4, 5 m; DAC splitter twin-port OSFP to
  2 x 400G OSFP (MCP7Y00-Nxxx, 1-3 m; its ordering table); QSFP112 DAC and all ACC splitters are
  discontinued ("use transceivers"), so a BlueField-3 or ConnectX-7 QSFP112 port takes optics.
- MMA4Z00-NS twin-port 2 x 400G multimode 2xSR4 50 m; MMA4Z00-NS400 single-port OSFP SR4 and
  MMA1Z00-NS400 QSFP112 SR4, 50 m on MFP7E10 straight multimode fibre (their product pages).
- MMS4X00-NM twin-port 2 x 400G single-mode 2xDR4: "switches together at reaches from 100 to 500
  meters", to a single-port 400G NIC transceiver "only up to their 100-meter maximum reach";
  MMS4X00-NS400 single-port OSFP DR4 100 m on MFP7E30 single-mode fibre; MMS4X50-NM 2xFR4 2 km
  on duplex LC fibre "NVIDIA does not supply" (their product pages).
- Structured cabling (docs.nvidia.com/networking/display/intrcnctcabreqndr400eth): reaches include
  two patch panels; MPO multimode up to 50 m (OM3 to 30 m, OM4 to 50 m), MPO single-mode straight
  up to 500 m, LC single-mode up to 2 km.
- XDR (docs.nvidia.com/networking/display/800g200gpam4list): LACC, single-mode transceivers and
  fibre only ("Multimode transceivers, active optical cables (AOC) ... not used for XDR"; DAC
  "too short at 200G-PAM4"); the same single-mode fibres as NDR; finned (IHS) parts in air-cooled
  Q3400/Q3200 switches, flat-top (RHS) parts in ConnectX-8. The page's part numbers could not be
  read here: XDR parts are named by form, and their reach is the single-mode MPO rule's 500 m.
- Arista's transceiver compatibility list (read through a mirror; arista.com was not reachable):
  400GBASE-CR8 OSFP twinax 1-3 m, 400G OSFP AOC 1-30 m, 400GBASE-SR8 100 m on OM4, 400GBASE-DR4
  500 m, 400GBASE-FR4 2 km. The 7060X5's OSFP ports run 8 x 50G lanes: to a ConnectX-7 (4 x 100G)
  only an optic with 100G optical lanes interoperates (DR4 with a DR4 NIC transceiver), so SR8
  and copper are switch-to-switch only. The 7060X6's 800G OSFP parts (2 x 400G) were not found
  in a readable source: named by form, with the NVIDIA twin-port reaches.
- RJ45: 1000BASE-T reaches 100 m (IEEE 802.3ab); no transceiver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TIERS = ("node-leaf", "leaf-spine", "spine-core")
TIER_KEYS = {"node-leaf": "node_leaf", "leaf-spine": "leaf_spine", "spine-core": "spine_core"}
# Assumed lengths where the inventory states none (docs/hardware.md): leaves at the end of the row
# (node-leaf under 30 m), spines in the row's network racks (50 m), cores in a central room (100 m)
DEFAULT_LENGTH_M = {"node-leaf": 30, "leaf-spine": 50, "spine-core": 100}
MEDIA_KEYS = ("dac", "acc", "aoc", "mmf", "smf", "fr4", "utp")
TEXT = {"dac": "passive copper (DAC)", "acc": "active copper (ACC/LACC)", "aoc": "active optical cable",
        "mmf": "multimode fibre", "smf": "single-mode fibre", "fr4": "single-mode duplex LC (FR4)",
        "utp": "copper RJ45"}


@dataclass(frozen=True)
class Medium:
    """One way to cable a tier on a family of switches."""

    key: str  # MEDIA_KEYS
    reach_m: int  # between two switches
    nic_reach_m: int  # switch to node (0: not offered to nodes)
    switch_part: str  # transceiver in a switch cage ("": none, the cable plugs in)
    cable: str  # the cable (a fibre per link, or the copper/AOC assembly)
    # node cage form -> its transceiver (absent: the medium does not reach that form)
    nic_parts: dict[str, str] = field(default_factory=dict)
    per_cage: bool = False  # one cable per used switch cage (a twin-port copper assembly or splitter)
    nic_cable: str = ""  # the cable to nodes where it is another part (a splitter)

    @property
    def optical(self) -> bool:
        return bool(self.switch_part)


_NDR_FIBRE_MM = "MFP7E10-Nxxx multimode MPO-12/APC crossover fibre, straight (OM4, up to 50 m)"
_NDR_FIBRE_SM = "MFP7E30-Nxxx single-mode MPO-12/APC crossover fibre, straight (OS2, up to 500 m)"
_CX8 = "800G OSFP single-mode transceiver, flat top (RHS; XDR or 2 x 400GbE)"
_LC = "duplex LC single-mode fibre (OS2; site-supplied, NVIDIA does not supply it)"

FAMILIES: dict[str, tuple[Medium, ...]] = {
    # Quantum-2 QM9700/QM9790 and Spectrum-4 SN5600 at 400G and 200G: twin-port OSFP cages
    "nvidia-400g": (
        Medium("dac", 2, 3, "", "MCP4Y10-Nxxx twin-port OSFP 2 x 400G passive copper (0.5-2 m)",
               {"osfp": ""}, per_cage=True,
               nic_cable="MCP7Y00-Nxxx twin-port OSFP to 2 x 400G OSFP passive copper splitter (1-3 m)"),
        Medium("acc", 5, 0, "", "twin-port OSFP 800G linear active copper, LACC (3-5 m)", per_cage=True),
        Medium("mmf", 50, 50, "MMA4Z00-NS (twin-port 2 x 400G multimode 2xSR4 OSFP, finned top, 50 m)",
               _NDR_FIBRE_MM, {"osfp-twin-flat": "MMA4Z00-NS-FLT (twin-port 2 x 400G multimode, flat top)",
                               "osfp": "MMA4Z00-NS400 (400G multimode SR4 OSFP, flat top, 50 m)",
                               "qsfp112": "MMA1Z00-NS400 (400G multimode SR4 QSFP112, 50 m)"}),
        Medium("smf", 500, 100, "MMS4X00-NM (twin-port 2 x 400G single-mode 2xDR4 OSFP, finned top, 500 m)",
               _NDR_FIBRE_SM, {"osfp-twin-flat": "MMS4X00-NM-FLT (twin-port 2 x 400G single-mode, flat top)",
                               "osfp": "MMS4X00-NS400 (400G single-mode DR4 OSFP, flat top, 100 m)",
                               "qsfp112": "MMS1X00-NS400 (400G single-mode DR4 QSFP112, 100 m)",
                               # ConnectX-8 at 2 x 400GbE (planes): single-mode (XDR list: no multimode)
                               "osfp-800": _CX8}),
        Medium("fr4", 2000, 0, "MMS4X50-NM (twin-port 2 x 400G single-mode 2xFR4 OSFP, 2 km)", _LC),
    ),
    # SN5600 at 800GbE (a whole cage per port) and Quantum-X800 Q3400 (XDR): single-mode only
    "nvidia-800g": (
        Medium("acc", 5, 0, "", "twin-port OSFP linear active copper, LACC (3-5 m; 200G-PAM4)", per_cage=True),
        Medium("smf", 500, 500, "twin-port OSFP single-mode transceiver, finned top (IHS; 2 x 800G XDR / 800GbE)",
               _NDR_FIBRE_SM, {"osfp-800": _CX8,
                               "osfp": "MMS4X00-NS400 (400G single-mode DR4 OSFP, flat top, 100 m)",
                               "qsfp112": "MMS1X00-NS400 (400G single-mode DR4 QSFP112, 100 m)"}),
    ),
    # Arista 7060X5: single-port 400G OSFP cages, 8 x 50G lanes
    "arista-400g": (
        Medium("dac", 3, 0, "", "CAB-O-O-400G (400GBASE-CR8 OSFP twinax, 1-3 m)"),
        Medium("aoc", 30, 0, "", "AOC-O-O-400G (400G OSFP active optical cable, 1-30 m)"),
        Medium("mmf", 100, 0, "OSFP-400G-SR8 (400GBASE-SR8, 100 m on OM4)",
               "MPO-16 multimode fibre (OM4, up to 100 m)"),
        Medium("smf", 500, 100, "OSFP-400G-DR4 (400GBASE-DR4, 500 m)", _NDR_FIBRE_SM,
               {"osfp-twin-flat": "MMS4X00-NM-FLT (twin-port 2 x 400G single-mode, flat top)",
                "osfp": "MMS4X00-NS400 (400G single-mode DR4 OSFP, flat top, 100 m)",
                "qsfp112": "MMS1X00-NS400 (400G single-mode DR4 QSFP112, 100 m)",
                "osfp-800": _CX8}),
        Medium("fr4", 2000, 0, "OSFP-400G-FR4 (400GBASE-FR4, 2 km)", _LC),
    ),
    # Arista 7060X6-64PE-B: 800G OSFP cages split 2 x 400G, 100G lanes (parts named by form)
    "arista-800g": (
        Medium("dac", 2, 0, "", "800G OSFP twin-port passive copper (2 x 400G, up to 2 m)", per_cage=True),
        Medium("mmf", 50, 50, "800G OSFP 2 x 400G multimode 2xSR4 transceiver", _NDR_FIBRE_MM,
               {"osfp-twin-flat": "MMA4Z00-NS-FLT (twin-port 2 x 400G multimode, flat top)",
                "osfp": "MMA4Z00-NS400 (400G multimode SR4 OSFP, flat top, 50 m)",
                "qsfp112": "MMA1Z00-NS400 (400G multimode SR4 QSFP112, 50 m)"}),
        Medium("smf", 500, 100, "800G OSFP 2 x 400G single-mode 2xDR4 transceiver", _NDR_FIBRE_SM,
               {"osfp-twin-flat": "MMS4X00-NM-FLT (twin-port 2 x 400G single-mode, flat top)",
                "osfp": "MMS4X00-NS400 (400G single-mode DR4 OSFP, flat top, 100 m)",
                "qsfp112": "MMS1X00-NS400 (400G single-mode DR4 QSFP112, 100 m)",
                "osfp-800": _CX8}),
    ),
    "rj45": (Medium("utp", 100, 100, "", "Cat6 RJ45 patch cable (1000BASE-T, up to 100 m)", {"rj45": ""}),),
}


def family(model_key: str, speed: int, custom: bool) -> str:
    """The media family of a switch model at a port speed ('custom': the model's own parts)."""
    if custom:
        return "custom"
    if model_key == "sn2201":
        return "rj45"
    if model_key == "arista-7060x5":
        return "arista-400g"
    if model_key == "arista-7060x6-64pe-b":
        return "arista-800g"
    return "nvidia-800g" if speed >= 800 else "nvidia-400g"


def offered(fam: str, tier: str, form: str) -> list[Medium]:
    """The family's media usable on `tier`: to nodes, those with a part for the node cage's form
    (a custom model's form takes any medium that reaches nodes: its own transceiver)."""
    out = []
    for m in FAMILIES.get(fam, ()):
        if tier == "node-leaf" and (not m.nic_reach_m or form != "custom" and form not in m.nic_parts):
            continue
        out.append(m)
    return out


def reach(m: Medium, tier: str) -> int:
    return m.nic_reach_m if tier == "node-leaf" else m.reach_m


def choose(fam: str, tier: str, form: str, length_m: int | None, media: str | None) -> Medium | str:
    """The tier's medium (to nodes of one cage form), or why none fits (a sentence for a located error)."""
    options = offered(fam, tier, form)
    length = DEFAULT_LENGTH_M[tier] if length_m is None else length_m
    if media is not None:
        m = next((m for m in options if m.key == media), None)
        if m is None:
            to = f" to {form} node cages" if tier == "node-leaf" else ""
            return (f"{TEXT[media]} is not offered on {tier}{to} by this switch ({fam}); "
                    f"it offers {', '.join(o.key for o in options) or 'nothing'}")
        if length_m is not None and reach(m, tier) < length_m:
            return f"{TEXT[media]} reaches {reach(m, tier)} m on {tier}, not {length_m} m"
        return m
    for m in options:
        if reach(m, tier) >= length:
            return m
    if not options:
        return f"no medium of this switch ({fam}) has a part for {form} node cages"
    longest = max(reach(m, tier) for m in options)
    return f"no medium of {fam} reaches {length} m on {tier} (the longest reaches {longest} m)"


def tier_medium(spec: Any, model: Any, speed: int, tier: str, form: str = "") -> Medium | str:
    """The medium of one tier of an inventory fabric (to nodes of `form` on node-leaf), or why none
    fits. A custom switch model carries its own transceiver on whatever medium the inventory names."""
    want = getattr(spec.cabling, TIER_KEYS[tier])
    if model.custom:
        return by_key(model, speed, want.media or "mmf")
    return choose(family(model.key, speed, False), tier, form, want.length_m, want.media)


def by_key(model: Any, speed: int, key: str) -> Medium:
    """The medium `key` of a switch model at `speed` (the one cabling.csv names); a custom model's
    is its own transceiver on that medium, its reach unchecked."""
    if model.custom:
        return Medium(key, 10_000, 10_000, model.transceiver, f"{TEXT.get(key, key)} cable (custom switch model)")
    return next(m for m in FAMILIES[family(model.key, speed, False)] if m.key == key)


def node_part(m: Medium, form: str, own: str) -> str:
    """The transceiver in a node cage of `form` on medium `m` ('': none, copper); a custom
    model's own transceiver text."""
    if form == "custom":
        return own if m.optical else ""
    return m.nic_parts.get(form, "")
