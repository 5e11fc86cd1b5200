"""``design(scenario, catalog, estimate) -> ClusterDesign``: composes layout, fabric, networks,
storage, power, cooling, floor and bill of materials. Pure: no I/O beyond the cached rules."""

from __future__ import annotations

import math
from dataclasses import replace

from clustertwin.design import bom as B
from clustertwin.design import plant
from clustertwin.design.cooling import HeatLoad, crah_fit_warnings, plan_cooling, with_halls
from clustertwin.design.fabric import FabricAsk
from clustertwin.design.floor import Racks, plan_floor
from clustertwin.design.layout import plan_layout, rack_capacity
from clustertwin.design.networks import plan_management
from clustertwin.design.parts import BomInputs, FabricChoice, Parts, RackPlan, Switches
from clustertwin.design.power import TYPICAL_FRACTION, ItLoads, pdus_for, plan_power
from clustertwin.design.result import ClusterDesign
from clustertwin.design.rules import DesignRules, load_rules
from clustertwin.design.spare_slots import place_spares
from clustertwin.design.spares import READS as SPARES_READS
from clustertwin.design.spares import resolve_spare_nodes
from clustertwin.design.storage import plan_storage
from clustertwin.errors import Problem, ScenarioError
from clustertwin.perf.checkpoint import job_checkpoint_gb

#: scenario keys :func:`design` reads (a section name covers the whole section): the cluster,
#: the model and training run (checkpoint size, tokens), ``economics.pue``,
#: ``buildout.start_date`` (the GPU servers' purchase date prices them, issue 37) and the keys
#: that size the auto spares
READS = ("source", "model", "training", "cluster", "economics.pue", "buildout.start_date", *SPARES_READS)


def _switch(catalog, switch_id: str, fallback, warnings: list[str], what: str):
    if catalog.has("switch", switch_id):
        return catalog.get("switch", switch_id)
    warnings.append(f"{what} switch {switch_id!r} is not in the catalog; "
                    f"counted as {fallback.id}")
    return fallback


def design(scenario, catalog, estimate=None, *, rules: DesignRules | None = None,
           cabling: bool = True) -> ClusterDesign:
    """Physical design for the scenario's job (GPU count from ``estimate.gpus``; without an
    estimate, ``scenario.cluster.gpus``). ``rules`` overrides the built-in design rules.
    Cables are counted per link class in closed form (the site is not placed: see
    :func:`clustertwin.design.site.summary.routed` for the routed lengths). ``cabling=False``
    skips even that: no ``cabling`` summary, and the bill of materials keeps the catalog's
    transceiver and cable lines (a draft the plan redoes)."""
    rules = rules or load_rules()
    src = scenario.source
    cl = scenario.cluster
    # the design holds every installed GPU (cluster.gpus, or the count perf solved for), not
    # only the job's: a run on part of a cluster leaves the rest idle, not uninstalled
    gpus = (max(int(estimate.installed_gpus or 0), int(estimate.gpus))
            if estimate is not None else cl.gpus)
    if gpus is None:
        raise ScenarioError([Problem(src, "cluster.gpus", "the design needs a GPU count: "
                                     "give cluster.gpus or an estimate")])
    warnings: list[str] = []
    notes: list[str] = []
    node, fab, switch, choice, cap, (cf, spares, job_nodes, spare_notes) = _sized(scenario, catalog, gpus, rules)
    leaf_sw, spine_sw = choice.leaf, choice.spine
    nodes = job_nodes + spares
    # spares that took installed nodes' slots leave the job fewer GPUs than it was sized on
    limit = job_nodes * node.gpus
    job_gpus_limit = limit if estimate is not None and estimate.gpus > limit else None
    notes += spare_notes
    # the switch model of the spine / aggregation tiers (the leaf model in a plain tree)
    upper_sw = spine_sw if cf.pod is not None else leaf_sw
    idle = max(0, job_nodes - math.ceil(estimate.gpus / node.gpus)) if estimate is not None else 0
    layout = plan_layout(node, job_nodes, spares, cf.su_nodes, rules, src, idle_nodes=idle)
    if fab.reserved_ports_per_su and not cf.managers_attached and cf.leaf:
        warnings.append("every leaf slot holds a node, so the fabric managers (UFM) attach "
                        "outside the counted compute-fabric ports")

    storage, storage_links, said, warned = _storage(scenario, catalog, estimate, node, gpus, nodes, rules)
    notes += said
    warnings += warned

    inband_sw = _switch(catalog, str(rules["inband_switch"]), switch, warnings, "in-band")
    oob_sw = _switch(catalog, str(rules["oob_switch"]), switch, warnings, "out-of-band")

    parts = Parts(node, fab, Switches(switch, leaf_sw, upper_sw, inband_sw, oob_sw), cf, layout, nodes)
    rp = _racks_and_pdus(parts, storage, storage_links, rules)
    racks, mgmt = rp.racks, rp.mgmt

    cooling, power = _cooling_and_power(scenario, parts, storage, rp, rules)
    if cooling.high_density:
        warnings.append(f"{rp.rack_kw:.1f} kW air-cooled racks need a high-density site "
                        "(contained aisles or rear-door heat exchangers)")
    floor = plan_floor(racks, rules, it_kw=power.it_kw)
    cooling = with_halls(cooling, floor.halls, rules)
    warnings += crah_fit_warnings(cooling, floor, rules, catalog)
    notes = list(cf.notes) + notes
    power, existing = _existing_facility(power, rules, notes)
    purchase = scenario.buildout.start_date if scenario.buildout is not None else None
    lines = _bom(catalog, BomInputs(parts, mgmt, storage, power, cooling, racks, floor, existing, purchase), rules)
    drafted = ClusterDesign(node_id=node.id, gpu_id=cl.gpu, layout=layout, fabric=cf,
                            networks=mgmt, storage=storage, power=power, cooling=cooling,
                            rack_counts=racks, floor=floor, bom=lines, warnings=tuple(warnings),
                            notes=tuple(notes),
                            facility="existing-facility" if existing else "new-build",
                            job_gpus_limit=job_gpus_limit)
    return _with_cabling(catalog, drafted) if cabling else drafted


#: BOM lines priced from the catalog's fabric transceivers and cables; the link classes
#: replace them with their cable media (:func:`_with_cabling`)
MEDIA_ITEMS = ("compute-fabric switch transceivers", "compute-fabric node transceivers",
               "fabric-manager (UFM) link transceivers", "compute-fabric optical cables",
               "compute-fabric copper cables", "storage-fabric cables")


def _with_cabling(catalog, d: ClusterDesign) -> ClusterDesign:
    """The design with its cables by medium, counted in closed form from its link classes
    (:mod:`clustertwin.design.site.classes`: links, cables and one medium per class, without
    placing the site; ``plan --cabling``, exports and drawings place it and route the lengths)."""
    from clustertwin.design.media import load_media
    from clustertwin.design.site.classes import cable_classes
    from clustertwin.design.site.summary import closed_form, media_bom_lines

    classes = cable_classes(d, catalog)
    counts = closed_form(classes)
    reach = {m.id: m.max_length_m for m in load_media()}
    far = [f"cabling: {c.kind} links may run up to {c.bound_m:,.1f} m, past the "
           f"{reach[c.medium]:,.0f} m of the longest-reach medium at {c.gbps:g} Gb/s "
           f"({c.medium}); export refuses the links past it (smaller halls: design rules "
           "hall_max_racks / hall_max_it_kw)" for c in classes if c.bound_m > reach[c.medium]]
    # cables and optics: one line per medium the link classes take, in place of the catalog's
    kept = [ln for ln in d.bom if not ln.item.startswith(MEDIA_ITEMS)]
    at = next((i for i, ln in enumerate(d.bom) if ln.item.startswith(MEDIA_ITEMS)), len(d.bom))
    bom = (*kept[:at], *media_bom_lines(counts), *kept[at:])
    return replace(d, cabling=counts, cable_classes=classes, bom=bom,
                   warnings=(*d.warnings, *far))


def _storage(scenario, catalog, estimate, node, gpus, nodes, rules):
    """The storage tiers for the job's checkpoints and data, the storage-fabric links they
    need, and the notes and warnings the user should read about them."""
    notes: list[str] = []
    warnings: list[str] = []
    storage = plan_storage(checkpoint_tb=job_checkpoint_gb(scenario, estimate) / 1000.0,
                           tokens=_tokens(scenario), gpus=gpus, node=node, nodes=nodes,
                           systems=catalog.all("storage"), rules=rules)
    if storage.on_nodes:
        notes.append(f"storage: {storage.required_capacity_tb:,.1f} TB of data and checkpoints "
                     "fit on the nodes' own NVMe (design rule local_storage_share): no shared "
                     "file system or object store is bought")
    elif storage.tier("pfs") is None:
        warnings.append("no parallel-file-system entry in the catalog: storage bandwidth is 0")
    storage_links = math.ceil(max(storage.write_gbps, storage.read_gbps) * 8
                              / rules.num("storage_port_gbps"))
    return storage, storage_links, notes, warnings


def _racks_and_pdus(parts: Parts, storage, storage_links: int, rules) -> RackPlan:
    """Rack kW, compute-fabric kW, rack counts by kind, the management networks, PDUs (total
    and by kind) and the management and storage-fabric kW."""
    node, layout, cf = parts.node, parts.layout, parts.cf
    leaf_sw, upper_sw = parts.sw.leaf, parts.sw.upper
    # rack kW and PDUs; management racks and OOB size depend on each other: iterate to a fixpoint
    rack_kw = layout.nodes_per_rack * node.max_power_kw
    tor_kw = cf.planes * cf.leaves_per_su * leaf_sw.power_kw_max if cf.tor else 0.0
    rack_kw += tor_kw                      # a top-of-rack leaf draws from its compute rack
    compute_racks = layout.compute_racks
    # top-of-rack leaves sit in the compute racks; the rest of the fabric in network racks
    if upper_sw is leaf_sw:
        rack_switches = cf.switches - (cf.leaf if cf.tor else 0)
        network_racks = math.ceil(rack_switches * leaf_sw.rack_units
                                  / rules.num("network_rack_switch_ru"))
    else:
        network_racks = _network_racks([(0 if cf.tor else cf.leaf, leaf_sw),
                                        (cf.spine + cf.core, upper_sw)], rules)
    cf_kw = _fabric_kw(cf, leaf_sw, upper_sw, "power_kw_max")
    storage_racks = math.ceil(storage.rack_units / rules.num("storage_rack_ru"))
    kinds = {"compute": compute_racks * pdus_for(rack_kw, rules), "network": 0, "storage": 0}
    if network_racks:
        kinds["network"] = network_racks * pdus_for(
            (cf_kw - tor_kw * compute_racks) / network_racks, rules)
    if storage_racks:
        kinds["storage"] = storage_racks * pdus_for(storage.power_kw / storage_racks, rules)
    fixed_pdus = sum(kinds.values())
    mgmt, mgmt_racks, pdus, mgmt_kw, sf_kw = _management(parts, storage_links, fixed_pdus, rules)
    kinds["management"] = pdus - fixed_pdus
    racks = Racks(compute=compute_racks, network=network_racks, management=mgmt_racks,
                  storage=storage_racks)
    return RackPlan(rack_kw, cf_kw, racks, mgmt, pdus, kinds, mgmt_kw, sf_kw)


def _cooling_and_power(scenario, parts: Parts, storage, rp: RackPlan, rules):
    """The cooling plant (mode, PUE) and the power chain that feeds it."""
    node, nodes, cf, sw = parts.node, parts.nodes, parts.cf, parts.sw
    rack_kw, cf_kw, sf_kw, mgmt_kw = rp.rack_kw, rp.cf_kw, rp.sf_kw, rp.mgmt_kw
    compute_racks = rp.racks.compute
    typical = node.typical_power_kw or TYPICAL_FRACTION * node.max_power_kw
    it_guess = (nodes * node.max_power_kw + cf_kw + sf_kw + mgmt_kw + storage.power_kw)
    liquid = node.cooling == "liquid" or rack_kw > rules.num("containment_max_rack_kw")
    liquid_racks_kw = nodes * node.max_power_kw if liquid else 0.0
    cooling = plan_cooling(HeatLoad(rack_kw=rack_kw, it_kw=it_guess, liquid_racks_kw=liquid_racks_kw,
                                    liquid_racks=compute_racks if liquid else 0,
                                    compute_racks=compute_racks, compute_kw=nodes * node.max_power_kw),
                           node.cooling, rules)
    pue = cooling.pue if scenario.economics.pue == "auto" else float(scenario.economics.pue)
    loads = ItLoads(nodes_kw=nodes * node.max_power_kw, nodes_typical_kw=nodes * typical,
                    compute_fabric_kw=cf_kw,
                    compute_fabric_typical_kw=_fabric_kw(cf, sw.leaf, sw.upper, "power_kw_typical"),
                    storage_fabric_kw=sf_kw,
                    storage_fabric_typical_kw=rp.mgmt.storage.switches * sw.fabric.power_kw_typical,
                    management_kw=mgmt_kw, storage_kw=storage.power_kw)
    power = plan_power(loads, pue=pue, rack_kw=rack_kw, pdus=rp.pdus, rules=rules,
                       pdus_by_kind=tuple(rp.kinds.items()))
    return cooling, power


def _sized(scenario, catalog, gpus: int, rules):
    """(node, fabric, switch, fabric choice, nodes per rack, :func:`_fabric_and_spares`) of
    ``gpus`` installed GPUs: the first step of :func:`design`."""
    src, cl = scenario.source, scenario.cluster
    node = catalog.node(cl.node, source=src, path="cluster.node")
    fab = catalog.fabric(cl.fabric.technology, source=src, path="cluster.fabric.technology")
    switch = catalog.get("switch", fab.switch, source=src, path="cluster.fabric.technology")
    cap, _ = rack_capacity(node, rules, src)
    choice = _fabric_options(catalog, cl.fabric, fab, switch, node, src)
    return node, fab, switch, choice, cap, _fabric_and_spares(scenario, catalog, gpus, node, choice, cap, rules)


def job_gpus_room(scenario, catalog, gpus: int, rules: DesignRules | None = None) -> int:
    """The GPUs a job can use of ``gpus`` installed, all but those of hot spare nodes that took
    installed nodes' slots (``cluster.spare_placement: inside``): the design's
    ``job_gpus_limit`` for a job on more, known before the job is estimated."""
    node, *_, (_, _, job_nodes, _) = _sized(scenario, catalog, gpus, rules or load_rules())
    return job_nodes * node.gpus


def _fabric_and_spares(scenario, catalog, gpus: int, node, choice: FabricChoice, cap: int, rules):
    """(compute fabric, hot spares, job nodes, notes): the fabric for the installed nodes and
    the advised spares placed per ``cluster.spare_placement`` (:mod:`.spare_slots`)."""
    cl, src = scenario.cluster, scenario.source
    fab, leaf_sw, spine_sw, pod_nodes = choice.fab, choice.leaf, choice.spine, choice.pod_nodes

    ask = FabricAsk(node=node, fabric=fab, switch=leaf_sw,
                    oversubscription=cl.fabric.oversubscription, topology=cl.fabric.topology,
                    nodes_per_rack=cap, rules=rules, source=src, pod_nodes=pod_nodes,
                    pod_oversubscription=cl.fabric.pod_oversubscription, spine_switch=spine_sw,
                    dual_tor=cl.fabric.dual_tor)
    return place_spares(ask, math.ceil(gpus / node.gpus),
                        resolve_spare_nodes(scenario, catalog, gpus), cl.spare_placement,
                        displace=cl.gpus is not None)


def _management(parts: Parts, storage_links: int, fixed_pdus: int, rules):
    """Management networks and racks, which size each other through the PDUs the management
    racks add (the OOB switches count PDU ports): iterated to a fixpoint. Returns the networks,
    management racks, total PDUs, management kW and storage-fabric kW."""
    cf, fab = parts.cf, parts.fab
    switch, inband_sw, oob_sw = parts.sw.fabric, parts.sw.inband, parts.sw.oob
    pdus = fixed_pdus
    mgmt_racks, mgmt = 0, None
    # UFM appliances exist whether or not a free leaf slot takes their links
    ufm = int(fab.reserved_ports_per_su * rules.num("fabric_manager_links_per_slot"))
    ufm = ufm if cf.leaf else 0            # no switch (one node): no subnet manager either
    for _ in range(8):
        mgmt = plan_management(parts, manager_links=ufm, storage_links=storage_links, pdus=pdus,
                               rules=rules)
        mgmt_kw = (mgmt.inband_switches * inband_sw.power_kw_max
                   + mgmt.oob_switches * oob_sw.power_kw_max
                   + mgmt.ufm_appliances * rules.num("ufm_appliance_kw")
                   + mgmt.management_servers * rules.num("management_server_kw"))
        sf_kw = mgmt.storage.switches * switch.power_kw_max
        mgmt_ru = (mgmt.storage.switches * switch.rack_units
                   + mgmt.inband_switches * inband_sw.rack_units
                   + mgmt.oob_switches * oob_sw.rack_units + mgmt.ufm_appliances
                   + mgmt.management_servers * rules.num("management_server_ru"))
        new_racks = max(1, math.ceil(mgmt_ru / rules.num("management_rack_ru")))
        new_pdus = fixed_pdus + new_racks * pdus_for((mgmt_kw + sf_kw) / new_racks, rules)
        if new_racks == mgmt_racks and new_pdus == pdus:
            break
        mgmt_racks, pdus = new_racks, new_pdus
    assert mgmt is not None
    return mgmt, mgmt_racks, pdus, mgmt_kw, sf_kw


def _existing_facility(power, rules, notes: list[str]):
    """(power, existing): a cluster within ``existing_facility_max_kw`` of facility power fits an
    existing facility, whose UPS and generators carry it: none are sized or bought here."""
    existing = power.facility_kw <= rules.num("existing_facility_max_kw")
    if existing:
        power = replace(power, ups_modules=0, generators=0)
        notes.append(f"{power.facility_kw:,.0f} kW of facility power fits an existing facility "
                     f"(up to {rules.num('existing_facility_max_kw'):,.0f} kW, design rule "
                     "existing_facility_max_kw): its UPS, generators and air handlers are not "
                     "bought; the build-out and economics default to it")
    return power, existing


def _tokens(scenario) -> float:
    return float(scenario.training.tokens or 0.0) if scenario.training is not None else 0.0


def _fabric_options(catalog, fs, fab, switch, node, src):
    """The leaf and spine switch models and the nodes per pod, from the scenario's fabric keys."""
    leaf_sw = switch if fs.leaf_switch is None else catalog.get(
        "switch", fs.leaf_switch, source=src, path="cluster.fabric.leaf_switch")
    spine_sw = switch if fs.spine_switch is None else catalog.get(
        "switch", fs.spine_switch, source=src, path="cluster.fabric.spine_switch")
    problems = []
    for key, sw in (("leaf_switch", leaf_sw), ("spine_switch", spine_sw)):
        if sw.technology != fab.technology:
            problems.append(Problem(src, f"cluster.fabric.{key}",
                f"{sw.id} is an {sw.technology} switch but the {fab.id} fabric is "
                f"{fab.technology}; pick an {fab.technology} switch"))
    pod_nodes = None
    if fs.pod_gpus is not None:
        if fs.pod_gpus % node.gpus:
            lo = fs.pod_gpus // node.gpus * node.gpus
            hint = f"{lo:,} or {lo + node.gpus:,}" if lo else f"{node.gpus}"
            problems.append(Problem(src, "cluster.fabric.pod_gpus",
                f"{fs.pod_gpus:,} is not a multiple of the {node.gpus} GPUs per {node.id}; "
                f"try {hint}"))
        pod_nodes = max(1, fs.pod_gpus // node.gpus)
    if problems:
        raise ScenarioError(problems)
    return FabricChoice(fab, leaf_sw, spine_sw, pod_nodes)


def _fabric_kw(cf, leaf_sw, upper_sw, attr: str) -> float:
    if upper_sw is leaf_sw:
        return cf.switches * getattr(leaf_sw, attr)
    return cf.leaf * getattr(leaf_sw, attr) + (cf.spine + cf.core) * getattr(upper_sw, attr)


def _network_racks(tiers, rules) -> int:
    """Network racks for (count, switch) tiers: switches up to ``network_rack_switch_ru`` pack
    by rack units; taller chassis (modular spines) fill usable rack space one by one."""
    budget = rules.num("network_rack_switch_ru")
    usable = rules.num("rack_ru") - rules.num("rack_reserved_ru")
    small = sum(n * sw.rack_units for n, sw in tiers if sw.rack_units <= budget)
    big = sum(math.ceil(n / max(1, int(usable // sw.rack_units)))
              for n, sw in tiers if sw.rack_units > budget and n)
    return math.ceil(small / budget) + big


def _entry(catalog, kind: str, entry_id: str):
    return catalog.get(kind, entry_id) if catalog.has(kind, entry_id) else None


def _bom(catalog, inp: BomInputs, rules) -> tuple[B.BomLine, ...]:
    """The bill of materials: one line per counted item, priced from the catalog or the rules."""
    p = inp.parts
    out = [B.node_line(catalog, p.node, p.nodes, inp.purchase)]
    out += _network_lines(catalog, p, inp.mgmt, rules)
    out += B.storage_lines(catalog, inp.storage)
    out += plant.power_lines(catalog, inp.power, inp.floor, rules, plant=not inp.existing)
    out += plant.cooling_lines(catalog, inp.cooling, plant=not inp.existing)
    out += plant.facility_lines(catalog, inp.power, inp.floor, inp.racks, plant=not inp.existing)
    return tuple(out)


def _network_lines(catalog, p: Parts, mgmt, rules) -> list[B.BomLine]:
    """The compute, storage and management networks' lines."""
    fab, cf = p.fab, p.cf
    switch, leaf_sw, upper_sw, inband_sw, oob_sw = p.sw.fabric, p.sw.leaf, p.sw.upper, p.sw.inband, p.sw.oob
    L = B.line
    out = []
    sw_t = _entry(catalog, "transceiver", fab.switch_transceiver)
    nd_t = _entry(catalog, "transceiver", fab.node_transceiver)
    fiber = _entry(catalog, "cable", fab.fiber_cable)
    copper = _entry(catalog, "cable", fab.copper_cable)
    if upper_sw is leaf_sw:
        out.append(L("network", f"compute-fabric switch {leaf_sw.name} "
                     f"({cf.leaf} leaf, {cf.spine} spine, {cf.core} core)", cf.switches,
                     leaf_sw))
    else:
        out.append(L("network", f"compute-fabric leaf switch {leaf_sw.name} ({cf.leaf} leaf)",
                     cf.leaf, leaf_sw))
        upper = f"{cf.spine} spine" + (f", {cf.core} aggregation" if cf.core else "")
        out.append(L("network", f"compute-fabric spine switch {upper_sw.name} ({upper})",
                     cf.spine + cf.core, upper_sw))
    out.append(L("network", "compute-fabric switch transceivers", cf.switch_modules, sw_t,
                 catalog_id=fab.switch_transceiver))
    if cf.node_modules:
        out.append(L("network", "compute-fabric node transceivers", cf.node_modules, nd_t,
                     catalog_id=fab.node_transceiver))
    if cf.manager_modules:
        out.append(L("network", "fabric-manager (UFM) link transceivers", cf.manager_modules,
                     nd_t, catalog_id=fab.node_transceiver))
    out.append(L("network", "compute-fabric optical cables", cf.fiber_cables, fiber,
                 catalog_id=fab.fiber_cable))
    if cf.copper_cables:
        out.append(L("network", "compute-fabric copper cables (in-rack)", cf.copper_cables,
                     copper, catalog_id=fab.copper_cable))
    if mgmt.storage.switches:
        out.append(L("network", f"storage-fabric switch {switch.name}", mgmt.storage.switches,
                     switch))
        out.append(L("network", "storage-fabric cables", mgmt.storage.cables, fiber,
                     catalog_id=fab.fiber_cable))
    out.append(L("network", f"in-band management switch {inband_sw.name}", mgmt.inband_switches,
                 inband_sw))
    out.append(L("network", f"out-of-band management switch {oob_sw.name}", mgmt.oob_switches,
                 oob_sw))
    if mgmt.ufm_appliances:
        out.append(L("network", "fabric manager (UFM) appliance", mgmt.ufm_appliances,
                     B.rule_price(rules, "ufm_appliance_usd",
                                  part_number="NVIDIA UFM Enterprise Appliance (NDR, 1U) "
                                              "with UFM Enterprise licence"),
                     catalog_id=None))
    out.append(L("other", "management / head-node server", mgmt.management_servers,
                 B.rule_price(rules, "management_server_usd",
                              reason="built to the RA's spec (2-socket x86, >= 24 cores, 384 GB, "
                                     "4 x HDR200, R1 Table 7) by any OEM; no single part number"),
                 catalog_id=None))
    return out
