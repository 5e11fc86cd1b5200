"""Facility plant and fit-out as bill-of-materials lines, priced by the equipment the design sizes.

Each line counts units the design sized and prices one unit from a catalog ``equipment`` entry
(``data/facility.yaml``: a sourced price per kW, kVA, kWh, m2, MW or unit, with its date):

=====================  ==============================================  ========================
line                   count                                           unit price
=====================  ==============================================  ========================
transformers           facility kW / (kVA x kW/kVA), + spare           kVA rating x $/kVA
switchgear lineups     one per transformer                             each
UPS modules            ``power.ups_modules`` (N+1 or 2N)               module kW x $/kW
UPS batteries          one string per module                           kW x minutes / 60 x $/kWh
generators             ``power.generators`` (N + spare)                set kW x $/kW
busway                 two runs (A/B) per row, more where a row's      metres x $/m
                       load passes one run's rating
rack PDUs              ``power.pdus``                                  each
chillers               ``cooling.chillers`` (N + spare)                kW rejected x $/kW
CRAHs                  ``cooling.crah_units`` (N+1 per hall)           kW sensible x $/kW
rear doors, CDUs       ``cooling.rdhx_units``, ``cooling.cdu_units``   each
rack enclosures        every rack                                      each
installation (elec.,   MW of critical IT load                          $/MW (the rest of the
mech.), shell, site,                                                   package after the
BMS, LV                                                                equipment lines)
fire protection        m2 of floor                                     $/m2
=====================  ==============================================  ========================

``scope``: rack PDUs, enclosures, rear doors and CDUs are ``fit-out`` (a tenant buys them in a
leased hall too); the rest is ``plant``, bought only with a built facility. A design in an
existing facility (:func:`clustertwin.design.core._existing_facility`) buys no plant.
"""

from __future__ import annotations

import math

from clustertwin.design import bom as B


def _equipment(catalog, eid: str):
    return catalog.get("equipment", eid, path=f"equipment {eid}")


def _sized(category: str, item: str, qty: float, entry, unit_usd: float, scope: str,
           unit: str = "each") -> B.BomLine:
    return B.line(category, item, qty, entry, terms=B.Terms(unit_usd=round(unit_usd, 2), scope=scope, unit=unit))


def _per_mw(catalog, eid: str, it_kw: float) -> B.BomLine:
    """A plant line priced per MW of critical IT load."""
    e = _equipment(catalog, eid)
    return _sized(e.category, f"{e.name}, per MW of critical IT load",
                  round(it_kw / 1000.0, 3), e, e.price_usd, "plant", unit="MW")


def busway_runs(it_kw: float, rows: int, run_kw: float) -> int:
    """Overhead busway runs: an A and a B feed per row, each carrying the row's whole load (so
    either can fail), more runs per feed where the average row draws more than one run."""
    rows = max(1, rows)
    return 2 * rows * max(1, math.ceil(it_kw / rows / run_kw - 1e-9))


def _busway(catalog, power, floor, rules) -> B.BomLine:
    bw = _equipment(catalog, "busway-1600a")
    runs = busway_runs(power.it_kw, floor.rows, bw.rating)
    run_m = rules.num("racks_per_row") * rules.num("rack_width_m") + rules.num("busway_feeder_m")
    return _sized("power", f"overhead busway 1,600 A: {runs:,} runs of {run_m:,.0f} m "
                  "(A and B feed per row)", round(runs * run_m, 1), bw, bw.price_usd, "plant",
                  unit="m")


def power_lines(catalog, power, floor, rules, *, plant: bool) -> list[B.BomLine]:
    """Transformers, switchgear, UPS modules and batteries, generators, RPPs and rack PDUs."""
    out: list[B.BomLine] = []
    if plant:
        tx = _equipment(catalog, "transformer-2500kva")
        kva = rules.num("transformer_kva")
        n_tx = (math.ceil(power.facility_kw / (kva * rules.num("transformer_kw_per_kva")) - 1e-9)
                + int(rules.num("transformer_spare")))
        out.append(_sized("power", f"pad-mount transformer {kva:,.0f} kVA (N+"
                          f"{int(rules.num('transformer_spare'))})", n_tx, tx,
                          kva * tx.price_usd, "plant"))
        sg = _equipment(catalog, "switchgear-lineup")
        out.append(_sized("power", "MV switchgear section and LV main switchboard (one lineup "
                          "per transformer)", n_tx, sg, sg.price_usd, "plant"))
        ups = _equipment(catalog, "ups-module-1000kw")
        out.append(_sized("power", f"UPS module {power.ups_module_kw:,.0f} kW "
                          f"({power.ups_redundancy})", power.ups_modules, ups,
                          power.ups_module_kw * ups.price_usd, "plant"))
        bat = _equipment(catalog, "ups-battery-li-ion")
        minutes = rules.num("ups_battery_minutes")
        kwh = power.ups_module_kw * minutes / 60.0
        out.append(_sized("power", f"Li-ion UPS battery, {kwh:,.0f} kWh per module "
                          f"({minutes:g} min at {power.ups_module_kw:,.0f} kW)",
                          power.ups_modules, bat, kwh * bat.price_usd, "plant"))
        gen = _equipment(catalog, "generator-2500kw")
        out.append(_sized("power", f"diesel generator set {power.generator_kw:,.0f} kW "
                          "(N+spare)", power.generators, gen,
                          power.generator_kw * gen.price_usd, "plant"))
        out.append(_busway(catalog, power, floor, rules))
        out.append(_per_mw(catalog, "electrical-installation", power.it_kw))
    pdu = _equipment(catalog, "rack-pdu-415v-60a")
    out.append(_sized("power", "rack PDU 415 V 3-phase 60 A with branch circuit", power.pdus, pdu,
                      pdu.price_usd, "fit-out"))
    return out


def cooling_lines(catalog, cooling, *, plant: bool) -> list[B.BomLine]:
    """Chillers, CRAHs (plant); rear-door heat exchangers and CDUs (fit-out)."""
    out: list[B.BomLine] = []
    if plant:
        ch = _equipment(catalog, "chiller-1000ton")
        out.append(_sized("cooling", f"water-cooled chiller {cooling.chiller_rating_kw:,.0f} kW "
                          "with tower, pumps and piping (N+1)", cooling.chillers, ch,
                          cooling.chiller_rating_kw * ch.price_usd, "plant"))
        if cooling.crah_units:
            cr = _equipment(catalog, "crah-fanwall-400kw")
            out.append(_sized("cooling", f"fan-wall CRAH {cooling.crah_rating_kw:,.0f} kW "
                              "(N+1 per hall)", cooling.crah_units, cr,
                              cooling.crah_rating_kw * cr.price_usd, "plant"))
        out.append(_per_mw(catalog, "mechanical-installation", cooling.heat_kw))
    if cooling.rdhx_units:
        rd = _equipment(catalog, "rdhx-75kw")
        out.append(_sized("cooling", "active rear-door heat exchanger (one per compute rack)",
                          cooling.rdhx_units, rd, rd.price_usd, "fit-out"))
    if cooling.cdu_units:
        cdu = _equipment(catalog, "cdu-row-1500kw")
        out.append(_sized("cooling", "coolant distribution unit (N+1)", cooling.cdu_units, cdu,
                          cdu.price_usd, "fit-out"))
    return out


def facility_lines(catalog, power, floor, racks, *, plant: bool) -> list[B.BomLine]:
    """Rack enclosures (fit-out); the shell, site, controls, low-voltage and fire lines (plant)."""
    enc = _equipment(catalog, "rack-enclosure-48u")
    out = [_sized("facility", "rack enclosure 48U 600 x 1,200 mm", racks.total, enc,
                  enc.price_usd, "fit-out")]
    if not plant:
        return out
    for eid in ("shell-structure", "site-civil", "controls-bms", "low-voltage-security"):
        out.append(_per_mw(catalog, eid, power.it_kw))
    fire = _equipment(catalog, "fire-suppression")
    out.append(_sized("facility", "fire detection and suppression, per m2 of floor",
                      round(floor.area_m2, 1), fire, fire.price_usd, "plant", unit="m2"))
    return out
