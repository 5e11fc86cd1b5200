"""The tracked run's view (report/views/track.py): found by the result's type like every
stage's, and the one source of the terminal rows, the tiles and the figures that track.html and
the web page show."""

from __future__ import annotations

from track.helpers import at
from track.helpers import plan_stub as _plan


def test_the_run_is_drawn_through_its_view():
    from clustertwin.cli.track import track_page
    from clustertwin.report import views
    from clustertwin.report.views import track as view
    from clustertwin.track.report import to_doc
    from clustertwin.track.synthetic import generate

    pv = _plan()
    res = at(generate(pv, 5), pv, 0.25)
    assert views.view_of(res).rows is view.rows and views.rows(res) == view.rows(res)
    titles = [fig.layout.title.text for _, fig in views.figures(res, None)]
    assert titles == ["Tokens trained: actual, plan and forecast", "Interruptions by cause and the time each cost",
                      "Step time per day against the plan's band"]
    fan = [tr for tr in views.figures(res, None)[0][1].data if tr.name == "Forecast, 10-90%"]
    assert fan and fan[0].fill == "tonextx"  # the P10-P90 band
    doc = to_doc(res)
    tiles = {t["key"]: t["value"] for t in view.tiles(res)}
    assert list(tiles) == list(view.TILE_KEYS)
    p10, p50, p90 = (tiles[f"forecast.trained_by_p{q}"] for q in (10, 50, 90))
    assert p10 <= p50 <= p90 and p50 == doc["forecast"]["trained_by_p50"][:16].replace("T", " ")
    page = track_page(res)
    for t in view.tiles(res):
        assert f'data-key="{t["key"]}">{t["value"]}<' in page
    assert "Drift" in page and "Lines read" in page
