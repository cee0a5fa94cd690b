"""The pool page as an organiser sees it in a browser."""

from __future__ import annotations

import pytest

from pooling import pool_services
from pooling.core.spec import PoolSpec
from tests.browser.test_uploads import log_in_as_organiser
from tests.helpers import make_campaign, make_run
from tests.pooling.test_pool_views import contrast

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def rgb_hex(css_colour: str) -> str:
    """'rgb(36, 87, 197)' -> '2457c5'."""
    channels = css_colour.removeprefix("rgb(").removesuffix(")").split(",")
    return "".join(f"{int(c):02x}" for c in channels)


def test_every_overlap_cell_is_readable_as_rendered(page, live_server):
    campaign = make_campaign(topics=("1",))
    for i in range(4):
        make_run(campaign, f"r{i}", {"1": [f"d{j}" for j in range(i, i + 6)]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=5))
    log_in_as_organiser(page, live_server.url)
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/pools/{pool.pk}/")
    cells = page.locator("table.overlap td")
    colours = cells.evaluate_all(
        "cells => cells.map(c => [getComputedStyle(c).color, getComputedStyle(c).backgroundColor])"
    )
    assert len(colours) == 16
    worst = min(contrast(rgb_hex(fg), rgb_hex(bg)) for fg, bg in colours)
    assert worst >= 4.5, f"an overlap cell's text has {worst:.2f}:1 contrast"
    # The diagonal, 1.00, is the darkest cell: its text is white.
    assert colours[0] == ["rgb(255, 255, 255)", "rgb(36, 87, 197)"]
