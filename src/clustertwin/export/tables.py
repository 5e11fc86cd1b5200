"""inventory.csv / inventory.json / cabling.csv: the inventory and the cabling map as files."""

from __future__ import annotations

import io
import json
from dataclasses import fields

from clustertwin.design.site.cabling import FIELDS, cabling_columns
from clustertwin.design.site.inventory import Device
from clustertwin.export.stage import ExportContext
from clustertwin.quoting import csv_text_column, csv_writer

DEVICE_FIELDS = [f.name for f in fields(Device)]
CHUNK = 65536       #: cabling.csv rows turned into text at a time


def inventory_csv(ctx: ExportContext) -> str:
    """One row per device (nodes, switches, PDUs, ...), columns as :class:`Device`, then its
    in-band and OOB (BMC / management port) addresses from the IP plan."""
    from clustertwin.export.ipplan import ip_plan

    addr = ip_plan(ctx).addresses
    buf = io.StringIO()
    w = csv_writer(buf)
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


def cabling_files(ctx: ExportContext, cols=None) -> dict[str, str]:
    """``cabling.csv`` and ``cable-summary.csv`` from one cabling map."""
    if cols is None:
        cols = cabling_columns(ctx.inventory, ctx.design)
    return {"cabling.csv": cabling_csv(ctx, cols), "cable-summary.csv": cable_summary_csv(cols)}


def cable_summary_csv(cols) -> str:
    """Cables by fabric, kind and medium (the quote's cable lines): distinct cables, links,
    total and longest routed length in metres, the medium's part number and reach."""
    import numpy as np

    key = np.char.add(np.char.add(cols["fabric"].astype(str), "|"),
                      np.char.add(np.char.add(cols["kind"].astype(str), "|"),
                                  cols["medium"].astype(str)))
    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(["fabric", "kind", "medium", "part_number", "cables", "links", "total_length_m",
                "max_length_m", "medium_reach_m"])
    for k in np.unique(key):
        sel = key == k
        fabric, kind, medium = k.split("|")
        w.writerow([fabric, kind, medium, cols["part_number"][sel][0],
                    len(np.unique(cols["cable_id"][sel])), int(sel.sum()),
                    f"{float(cols['length_m'][sel].sum()):.1f}",
                    f"{float(cols['length_m'][sel].max()):.1f}",
                    f"{float(cols['max_length_m'][sel][0]):g}"])
    return buf.getvalue()


def cabling_csv(ctx: ExportContext, cols=None) -> str:
    """One row per link, columns as :class:`clustertwin.design.site.cabling.Link`."""
    if cols is None:
        cols = cabling_columns(ctx.inventory, ctx.design)
    # rows are joined directly, several times faster than csv.writer on 10^5-10^6 rows; text
    # columns go through the spreadsheet rule (quoting.csv_text_column: names and ports are
    # identifiers and come back as they are); a chunk of rows at a time, so only one chunk's
    # numbers are ever held as text beside the finished file
    n = len(cols[FIELDS[0]])
    parts = [",".join(FIELDS) + "\n" + ("" if n else "\n")]   # no links: a blank line
    for lo in range(0, n, CHUNK):
        text = [_column_text(cols[f][lo:lo + CHUNK]) for f in FIELDS]
        parts.append("".join(",".join(row) + "\n" for row in zip(*text, strict=True)))
    return "".join(parts)


def _column_text(c) -> list[str]:
    """A column's cells as CSV fields: numbers as ``str`` gives them, text escaped."""
    if c.dtype == object or c.dtype.kind in "US":
        return csv_text_column([str(v) for v in c.tolist()])
    return c.astype(str).tolist()
