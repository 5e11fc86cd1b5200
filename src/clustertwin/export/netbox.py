"""NetBox (DCIM) bulk-import CSVs: the operators' source of truth, loaded in this order in
NetBox's *Import* pages (each file's header is the import form's field names):

``netbox-sites.csv`` (one site), ``netbox-locations.csv`` (the data hall),
``netbox-manufacturers.csv``, ``netbox-device-roles.csv``, ``netbox-device-types.csv``,
``netbox-racks.csv`` (the design's rack height), ``netbox-devices.csv`` (rack and position:
devices stacked from the bottom at their catalog height in inventory slot order, as the rack
elevations draw them; 0U PDUs and unracked CDUs carry no position), ``netbox-interfaces.csv``
(every cabled port) and ``netbox-cables.csv`` (every link of the cabling map); and
``netbox-device-types.yaml``, the device types with their cabled ports in the community
devicetype-library layout (one YAML document per type).

Interface types: InfiniBand ``infiniband-hdr/ndr/xdr`` by link speed on an InfiniBand compute
fabric, else Ethernet by speed; OOB ``1000base-t``. Cable types: ``mmf`` / ``smf`` (optical,
from the catalog cable id), ``dac-passive`` (copper), ``cat6`` (OOB).
"""

from __future__ import annotations

import io

import numpy as np

from clustertwin.export.stage import ExportContext
from clustertwin.quoting import csv_text_column, csv_writer

SITE_STATUS = "planned"
ROLE_COLOURS = {"node": "4caf50", "nvswitch": "8bc34a", "leaf": "2196f3", "spine": "3f51b5",
                "core": "673ab7", "inband": "00bcd4", "oob": "9e9e9e", "management": "ff9800",
                "ufm": "ffc107", "storage": "795548", "pdu": "f44336", "cdu": "e91e63"}
KNOWN_MAKERS = {"NVIDIA", "DDN", "VAST", "WEKA", "Pure", "NetApp", "Dell", "HPE", "Supermicro",
                "Lenovo", "Arista", "Cisco", "Juniper", "AMD", "Intel"}
IB_TYPES = {200: "infiniband-hdr", 400: "infiniband-ndr", 800: "infiniband-xdr"}
ETH_TYPES = {100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56", 400: "400gbase-x-osfp",
             800: "800gbase-x-osfp"}


def _csv(header: list[str], rows) -> str:
    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def _slug(text: str) -> str:
    out = "".join(c if c.isascii() and c.isalnum() else "-" for c in text.lower()).strip("-")
    while "--" in out:
        out = out.replace("--", "-")
    return out[:100] or "x"


def _model_of(ctx: ExportContext, d) -> str:
    return d.model or f"{d.role}-generic"


def _device_types(ctx: ExportContext) -> dict[str, tuple[str, int]]:
    """model -> (manufacturer, U height)."""
    from clustertwin.export.svg import device_heights

    heights = device_heights(ctx)
    out: dict[str, tuple[str, int]] = {}
    for d in ctx.inventory.devices:
        model = _model_of(ctx, d)
        if model in out:
            continue
        maker = "Generic"
        if d.model and ctx.catalog is not None:
            for kind in ("node", "switch", "storage"):
                try:
                    entry = ctx.catalog.get(kind, d.model)
                except Exception:  # noqa: BLE001 - not of this kind
                    continue
                # only some catalog kinds name a vendor (GPU, equipment): a node, switch or storage
                # entry falls back to the maker its name starts with
                maker = getattr(entry, "vendor", "") or (
                    entry.name.split()[0] if entry.name.split()[0] in KNOWN_MAKERS else "Generic")
                break
        u = 0 if d.role in ("pdu", "cdu") else heights.get(d.model, heights.get(d.role, 1))
        out[model] = (maker.strip() or "Generic", int(u))
    return out


def _positions(ctx: ExportContext, types: dict, rack_u: int) -> dict[str, int]:
    """Device name -> lowest U, stacked from the bottom in slot order (0 = no position)."""
    used: dict[str, int] = {}
    out: dict[str, int] = {}
    for d in sorted((d for d in ctx.inventory.devices if d.rack and d.slot),
                    key=lambda d: (d.rack, d.slot)):
        u = types[_model_of(ctx, d)][1]
        if not u:
            continue
        base = used.get(d.rack, 0)
        if base + u <= rack_u:
            out[d.name] = base + 1
            used[d.rack] = base + u
    return out


def _iface_type(ctx: ExportContext, fabric: str, gbps: float) -> str:
    if fabric == "oob":
        return "1000base-t"
    ib = fabric == "compute" and ctx.design.fabric.technology.startswith("ib")
    table = IB_TYPES if ib else ETH_TYPES
    return table.get(int(round(gbps)), "other")


def _cable_type(media: str, cable: str, fabric: str) -> str:
    if fabric == "oob":
        return "cat6"
    if media == "copper":
        return "dac-passive"
    return "smf" if "smf" in cable else "mmf" if cable else ""


def _text(col: np.ndarray) -> np.ndarray:
    """A column as text without a fixed-width copy: object columns (Python strings) as they
    are, others as ``str`` of each value (what ``astype(str)`` gives) in an object array."""
    if col.dtype == object:
        return col
    return np.asarray([str(v) for v in col.tolist()], dtype=object)


def _field(col: np.ndarray) -> list[str]:
    """A column as CSV fields through the spreadsheet rule (:func:`csv_text_column`)."""
    return csv_text_column(_text(col).tolist())


def _link_types(ctx: ExportContext, cols: dict) -> dict[str, np.ndarray]:
    """Interface and cable type of every link, looked up once per distinct combination
    (fabric, whole Gb/s, media, cable id): one small dict, no per-link key strings."""
    seen: dict[tuple, tuple[str, str]] = {}
    iface = np.empty(len(cols["fabric"]), dtype=object)
    cable = np.empty(len(cols["fabric"]), dtype=object)
    gbps = cols["gbps"].astype(np.int64).tolist()
    keys = zip(cols["fabric"].tolist(), gbps, cols["media"].tolist(), cols["cable"].tolist(),
               strict=True)
    for i, (f, g, media, cab) in enumerate(keys):
        got = seen.get((f, g, media, cab))
        if got is None:
            f, media, cab = str(f), str(media), str(cab)
            got = seen[(f, g, media, cab)] = (_iface_type(ctx, f, float(g)),
                                              _cable_type(media, cab, f))
        iface[i], cable[i] = got
    return {"iface": iface, "cable": cable}


def _first_ports(devs: list, ports: list) -> np.ndarray:
    """Positions of the first occurrence of each (device, port) pair, in order: the pairs
    coded as integers (device number x port number), never as one string or tuple each."""
    dev_no: dict = {}
    port_no: dict = {}
    code = np.fromiter((dev_no.setdefault(d, len(dev_no)) for d in devs), np.int64, len(devs))
    pcode = np.fromiter((port_no.setdefault(p, len(port_no)) for p in ports), np.int64,
                        len(ports))
    _, first = np.unique(code * max(1, len(port_no)) + pcode, return_index=True)
    first.sort()
    return first


def _chunked(lines, size: int = 65536) -> str:
    """``"".join`` of many short lines, a chunk at a time (a bounded list of pieces alive);
    no lines at all give one blank line, as ``"\\n".join(rows) + "\\n"`` did."""
    import itertools

    out = []
    it = iter(lines)
    while chunk := "".join(itertools.islice(it, size)):
        out.append(chunk)
    return "".join(out) or "\n"


def _site_files(ctx: ExportContext, types: dict, rack_u: int) -> dict[str, str]:
    site, hall = ctx.cluster_name, "data-hall-1"
    roles = sorted({d.role for d in ctx.inventory.devices})
    makers = sorted({m for m, _ in types.values()})
    return {
        "netbox-sites.csv": _csv(["name", "slug", "status"], [[site, _slug(site), SITE_STATUS]]),
        "netbox-locations.csv": _csv(["site", "name", "slug", "status"],
                                     [[site, hall, hall, SITE_STATUS]]),
        "netbox-manufacturers.csv": _csv(["name", "slug"], [[m, _slug(m)] for m in makers]),
        "netbox-device-roles.csv": _csv(["name", "slug", "color"],
                                        [[r, _slug(r), ROLE_COLOURS.get(r, "9e9e9e")]
                                         for r in roles]),
        "netbox-device-types.csv": _csv(
            ["manufacturer", "model", "slug", "u_height", "is_full_depth"],
            [[m, model, _slug(model), u, "true" if u else "false"]
             for model, (m, u) in sorted(types.items())]),
        "netbox-racks.csv": _csv(["site", "location", "name", "status", "width", "u_height"],
                                 [[site, hall, r.name, SITE_STATUS, 19, rack_u]
                                  for r in ctx.inventory.racks]),
    }


def _device_rows(ctx: ExportContext, types: dict, pos: dict[str, int]) -> list[list]:
    site, hall = ctx.cluster_name, "data-hall-1"
    rows = []
    for d in ctx.inventory.devices:
        model = _model_of(ctx, d)
        p = pos.get(d.name, 0)
        rows.append([d.name, d.role, types[model][0], model, site, hall if d.rack else "",
                     d.rack, p or "", "front" if p else "", SITE_STATUS, d.serial])
    return rows


def netbox_files(ctx: ExportContext, cols: dict | None = None) -> dict[str, str]:
    """The NetBox import files; ``cols``: the cabling map's columns when already built."""
    from clustertwin.design.rules import load_rules
    from clustertwin.design.site.cabling import cabling_columns
    from clustertwin.export.stage import yaml_text

    rack_u = int(load_rules().num("rack_ru"))
    types = _device_types(ctx)
    files = _site_files(ctx, types, rack_u)
    files["netbox-devices.csv"] = _csv(
        ["name", "role", "manufacturer", "device_type", "site", "location", "rack", "position",
         "face", "status", "serial"], _device_rows(ctx, types, _positions(ctx, types, rack_u)))
    if cols is None:
        cols = cabling_columns(ctx.inventory, ctx.design)
    kind = _link_types(ctx, cols)
    # rows below are joined directly (several times faster than csv.writer at 10^5-10^6
    # links); every text column goes through the spreadsheet rule (csv_text_column), which
    # gives names and ports, identifiers, back as they are
    a = (_field(cols["a_device"]), _field(cols["a_port"]))
    b = (_field(cols["b_device"]), _field(cols["b_port"]))
    # first type wins for a port on two links (none today)
    devs, ports, iface = a[0] + b[0], a[1] + b[1], csv_text_column(kind["iface"].tolist()) * 2
    first = _first_ports(devs, ports).tolist()
    files["netbox-interfaces.csv"] = "device,name,type\n" + _chunked(
        f"{devs[i]},{ports[i]},{iface[i]}\n" for i in first)
    del devs, ports, iface, first
    files["netbox-device-types.yaml"] = yaml_text(device_type_docs(ctx, cols, kind["iface"]),
                                                  all_docs=True)
    body = zip(a[0], a[1], b[0], b[1], csv_text_column(kind["cable"].tolist()),
               _field(cols["fabric"]), _field(cols["cable_id"]), strict=True)
    files["netbox-cables.csv"] = (
        "side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,type,"
        "status,label\n" + _chunked(f"{ad},dcim.interface,{ap},{bd},dcim.interface,{bp},"
                                    f"{ct},planned,{fb}-{cid}\n"
                                    for ad, ap, bd, bp, ct, fb, cid in body))
    return files


def device_type_docs(ctx: ExportContext, cols: dict, iface: np.ndarray) -> list[dict]:
    """Device types in the community devicetype-library's YAML layout (manufacturer, model,
    slug, u_height, is_full_depth, interfaces[name, type]): the cabled ports of one device of
    each model (``cols``: the cabling map's columns, ``iface``: each link's interface type)."""
    types = _device_types(ctx)
    first: dict[str, str] = {}
    for d in ctx.inventory.devices:
        first.setdefault(_model_of(ctx, d), d.name)
    model_of_first = {name: model for model, name in first.items()}
    ports: dict[str, dict[str, str]] = {m: {} for m in types}
    for side in ("a", "b"):
        dev = _text(cols[f"{side}_device"]).tolist()
        port = cols[f"{side}_port"]
        for i in [i for i, name in enumerate(dev) if name in model_of_first]:
            ports[model_of_first[dev[i]]].setdefault(str(port[i]), iface[i])
    return [{"manufacturer": maker, "model": model, "slug": _slug(model), "u_height": u,
             "is_full_depth": bool(u),
             **({"interfaces": [{"name": p, "type": t} for p, t in ports[model].items()]}
                if ports[model] else {})}
            for model, (maker, u) in sorted(types.items())]
