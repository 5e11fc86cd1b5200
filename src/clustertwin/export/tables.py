"""inventory.csv / inventory.json / cabling.csv: the inventory and the cabling map as files."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import fields

from clustertwin.export.cabling import FIELDS, cabling_columns
from clustertwin.export.inventory import Device
from clustertwin.export.stage import ExportContext

DEVICE_FIELDS = [f.name for f in fields(Device)]


def inventory_csv(ctx: ExportContext) -> str:
    """One row per device (nodes, switches, PDUs, ...), columns as :class:`Device`, then its
    in-band and OOB (BMC / management port) addresses from the IP plan."""
    from clustertwin.export.ipplan import ip_plan

    addr = ip_plan(ctx).addresses
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*DEVICE_FIELDS, "ip_inband", "ip_oob"])
    w.writerows([*(getattr(d, f) for f in DEVICE_FIELDS), addr.get(d.name, {}).get("inband", ""),
                 addr.get(d.name, {}).get("bmc", "")] for d in ctx.inventory.devices)
    return buf.getvalue()


def inventory_json(ctx: ExportContext) -> str:
    from clustertwin.export.ipplan import ip_plan

    inv, d, plan = ctx.inventory, ctx.design, ip_plan(ctx)
    doc = {
        "name": inv.name, "node": inv.node_model, "gpu": inv.gpu_model,
        "gpus_per_node": inv.gpus_per_node, "trays_per_system": inv.trays_per_system,
        "counts": {role: b - a for role, a, b in inv.spans},
        "design": {"nodes": d.nodes, "gpus": d.gpus, "racks": d.racks,
                   "scalable_units": d.scalable_units},
        "racks": [vars(r) for r in inv.racks],
        "devices": [vars(x) | {"addresses": plan.addresses.get(x.name, {})}
                    for x in inv.devices],
        "subnets": [vars(s) for s in plan.subnets],
    }
    return json.dumps(doc, separators=(",", ":")) + "\n"


def cabling_csv(ctx: ExportContext) -> str:
    """One row per link, columns as :class:`clustertwin.export.cabling.Link`."""
    cols = cabling_columns(ctx.inventory, ctx.design)
    # names and ports are hostname-like (no commas or quotes), so rows are joined directly,
    # several times faster than csv.writer on 10^5-10^6 rows
    text = [cols[f].astype(str) if cols[f].dtype != object else cols[f] for f in FIELDS]
    rows = map(",".join, zip(*(c.tolist() for c in text), strict=True))
    return ",".join(FIELDS) + "\n" + "\n".join(rows) + "\n"
