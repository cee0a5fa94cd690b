"""A participant submits runs for their team in a real browser: a rejected file
shows its problems and stores nothing, a good one joins the team's runs, and
nothing of another team or of the organisers' pages is within reach."""

from __future__ import annotations

import pytest

from pooling.models import Run
from tests.helpers import PASSWORD, make_campaign, make_team, make_team_run, make_user, run_text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def file(name: str, data: bytes) -> dict:
    return {"name": name, "mimeType": "text/plain", "buffer": data}


def test_a_participant_submits_runs_and_sees_only_their_team(page, live_server):
    campaign = make_campaign(topics=("301", "302"))
    pat, quinn = make_user("pat"), make_user("quinn")
    mine = make_team(campaign, "uni-x", members=[pat])
    other = make_team(campaign, "lab-y", members=[quinn])
    make_team_run(other, "lab-y-secret", {"301": ["d9"]})
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "pat")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    assert "uni-x" in page.content()

    page.locator("input[type=file]").first.set_input_files(
        files=[file("bad.txt", b"301 Q0 d1 1 high uni-x-1\n")]
    )
    page.get_by_role("button", name="Submit").click()
    page.get_by_text("Rejected: nothing was stored.").wait_for()
    assert "bad.txt:1: score 'high' is not a number" in page.content()
    assert not Run.objects.filter(team=mine).exists()

    good = run_text("uni-x-1", {"301": ["d1", "d2"], "302": ["d3"]})
    page.locator("input[type=file]").first.set_input_files(files=[file("good.txt", good)])
    page.get_by_role("button", name="Submit").click()
    page.get_by_text("Run uni-x-1 stored").wait_for()
    assert list(Run.objects.filter(team=mine).values_list("tag", flat=True)) == ["uni-x-1"]
    assert "lab-y" not in page.content()

    for path in (f"/campaigns/{campaign.slug}/", f"/api/campaigns/{campaign.slug}/runs/"):
        response = page.goto(base + path)
        assert response.status in (403, 404), path
        assert "lab-y-secret" not in page.content()


def test_a_teams_late_run_form_stays_on_one_line(page, live_server):
    """Issue 23: "0 left · accept [1] more [Accept]" wrapped over three lines."""
    campaign = make_campaign(topics=("301",))
    make_user("boss", organiser=True)
    make_team(campaign, "Waterloo Neural Rankers", members=[make_user("pat")])
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/teams/")
    form = page.locator('form[action$="/accept-late/"]')
    parts = [
        form.get_by_text("0 left · accept"),
        form.locator("input[name=count]"),
        form.get_by_text("more"),
    ]
    middles = [box["y"] + box["height"] / 2 for box in (p.bounding_box() for p in parts)]
    button = form.get_by_role("button", name="Accept").bounding_box()
    middles.append(button["y"] + button["height"] / 2)
    assert max(middles) - min(middles) < 4  # one line
