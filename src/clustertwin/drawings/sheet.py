"""Drawing sheets: ISO paper sizes, standard scales, a title block, and text sized in paper mm.

A sheet's SVG user unit is one millimetre of paper (``width="841mm"``), so a text's
``font-size`` is its printed height: every text on a sheet is at least :data:`MIN_TEXT_MM`
(2 mm, the smallest lettering drawing standards accept for notes, ISO 3098 / ISO 5457
practice). :func:`choose_sheet` picks the first standard scale (1:50, 1:100, 1:200 ...) and,
at that scale, the smallest ISO A sheet (either orientation) whose drawing area holds the
extent: the most readable scale that fits at all, on the least paper.
"""

from __future__ import annotations

from dataclasses import dataclass

from clustertwin.quoting import html_text

#: ISO 216 A sizes, landscape (width, height) in mm
SHEETS = {"A3": (420.0, 297.0), "A2": (594.0, 420.0), "A1": (841.0, 594.0),
          "A0": (1189.0, 841.0)}
SCALES = (100, 200, 250, 500, 1000, 2000)
MIN_TEXT_MM = 2.0
TEXT_MM = 2.5            #: notes and labels
HEAD_MM = 5.0            #: sheet heading
MARGIN_MM = 10.0
TITLE_BLOCK_MM = (180.0, 36.0)   #: width, height, at the bottom right


@dataclass(frozen=True)
class Sheet:
    size: str
    width_mm: float
    height_mm: float
    scale: int               #: 1:scale
    #: drawing area (x, y, w, h) in mm, clear of the title block
    area: tuple[float, float, float, float]

    def mm(self, metres: float) -> float:
        """Paper mm of a length in metres at the sheet's scale."""
        return metres * 1000.0 / self.scale


def _area(w: float, h: float) -> tuple[float, float, float, float]:
    return (MARGIN_MM, MARGIN_MM, w - 2 * MARGIN_MM, h - 2 * MARGIN_MM - TITLE_BLOCK_MM[1] - 4)


def choose_sheet(extent_w_m: float, extent_h_m: float, scales=SCALES) -> Sheet:
    """The most readable standard scale at which the extent fits a sheet, on the smallest
    sheet (either orientation) at that scale; past the last scale, A0 at the last scale."""
    for scale in scales:
        for size, (a, b) in SHEETS.items():
            for w, h in ((a, b), (b, a)):
                x, y, aw, ah = _area(w, h)
                if extent_w_m * 1000 / scale <= aw and extent_h_m * 1000 / scale <= ah:
                    return Sheet(size, w, h, scale, (x, y, aw, ah))
    w, h = SHEETS["A0"]
    return Sheet("A0", w, h, scales[-1], _area(w, h))


# an SVG element: its position, its text and one keyword per attribute it may carry
def text(x: float, y: float, s: str, size: float = TEXT_MM, *, anchor: str = "", cls: str = "",
         fill: str = "", rotate: bool = False, weight: str = "") -> str:
    """A text ``size`` mm tall on paper (never below :data:`MIN_TEXT_MM`)."""
    size = max(MIN_TEXT_MM, size)
    a = f' text-anchor="{anchor}"' if anchor else ""
    c = f' class="{cls}"' if cls else ""
    f = f' fill="{fill}"' if fill else ""
    r = f' transform="rotate(-90 {x:.2f} {y:.2f})"' if rotate else ""
    b = f' font-weight="{weight}"' if weight else ""
    return (f'<text x="{x:.2f}" y="{y:.2f}" font-size="{size:.2f}"{a}{c}{f}{r}{b}>'
            f"{html_text(s)}</text>")


def text_fits(s: str, size: float, length_mm: float) -> bool:
    """Whether ``s`` at ``size`` mm fits in ``length_mm`` (sans-serif ~0.6 em per character)."""
    return len(s) * 0.6 * size <= length_mm


def open_sheet(sheet: Sheet, title: str) -> list[str]:
    w, h = sheet.width_mm, sheet.height_mm
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:g}mm" height="{h:g}mm" '
            f'viewBox="0 0 {w:g} {h:g}" font-family="sans-serif" font-size="{TEXT_MM}" '
            f'class="sheet sheet-{sheet.size.lower()}">',
            f"<title>{html_text(title)}</title>",
            f'<rect x="0" y="0" width="{w:g}" height="{h:g}" fill="#ffffff"/>',
            f'<rect x="{MARGIN_MM / 2:g}" y="{MARGIN_MM / 2:g}" width="{w - MARGIN_MM:g}" '
            f'height="{h - MARGIN_MM:g}" fill="none" stroke="#000" stroke-width="0.5" '
            'class="border"/>']


@dataclass(frozen=True)
class SheetSet:
    """What the title block of every sheet of one drawing set repeats: the project (also the
    scenario named), the issue date, the revision and the number of sheets in the set."""

    project: str
    date: str = ""
    revision: str = "A"
    of: int = 1


def title_block(sheet: Sheet, sheets: SheetSet, drawing: str, number: int) -> list[str]:
    """The title block at the sheet's bottom right: project, scenario, drawing, date, scale,
    revision, sheet n of N, paper size."""
    project = scenario = sheets.project
    date, revision, of = sheets.date, sheets.revision, sheets.of
    bw, bh = TITLE_BLOCK_MM
    x0 = sheet.width_mm - MARGIN_MM - bw
    y0 = sheet.height_mm - MARGIN_MM - bh
    out = [f'<g class="title-block"><rect x="{x0:.2f}" y="{y0:.2f}" width="{bw:g}" '
           f'height="{bh:g}" fill="#fff" stroke="#000" stroke-width="0.5"/>']
    rows = [("project", project), ("scenario", scenario), ("drawing", drawing)]
    for i, (k, v) in enumerate(rows):
        y = y0 + 6 + i * 7
        out.append(text(x0 + 3, y, k, 2.0, fill="#555"))
        out.append(text(x0 + 22, y, v[:70], TEXT_MM if len(v) < 55 else 2.0))
    y = y0 + bh - 6
    cells = [("date", date or "-"), ("scale", f"1:{sheet.scale} at {sheet.size}"),
             ("revision", revision), ("sheet", f"{number} of {of}")]
    for i, (k, v) in enumerate(cells):
        x = x0 + 3 + i * bw / 4
        out.append(text(x, y - 4, k, 2.0, fill="#555"))
        out.append(text(x, y + 1, v, TEXT_MM, cls=f"tb-{k}"))
    out.append(f'<line x1="{x0:.2f}" y1="{y - 9:.2f}" x2="{x0 + bw:.2f}" y2="{y - 9:.2f}" '
               'stroke="#000" stroke-width="0.3"/></g>')
    return out


def scale_bar(sheet: Sheet, x: float, y: float) -> list[str]:
    """A bar of a round number of metres, about 40-80 mm long on paper, labelled."""
    metres = next((m for m in (1, 2, 5, 10, 20, 50, 100, 200) if sheet.mm(m) >= 40), 200)
    L = sheet.mm(metres)
    return [f'<g class="scale"><line x1="{x:.2f}" y1="{y:.2f}" x2="{x + L:.2f}" y2="{y:.2f}" '
            'stroke="#000" stroke-width="0.6"/>',
            f'<line x1="{x:.2f}" y1="{y - 1.5:.2f}" x2="{x:.2f}" y2="{y + 1.5:.2f}" '
            'stroke="#000" stroke-width="0.4"/>',
            f'<line x1="{x + L:.2f}" y1="{y - 1.5:.2f}" x2="{x + L:.2f}" y2="{y + 1.5:.2f}" '
            'stroke="#000" stroke-width="0.4"/>',
            text(x + L / 2, y - 2.5, f"{metres} m (1:{sheet.scale})", anchor="middle",
                 cls="scale"), "</g>"]
