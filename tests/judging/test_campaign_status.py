"""The campaign's progress counted from the stored judgments: the selector, the
`campaign_status` command, the dashboard page and the API resource."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from judging import services
from judging.core import progress
from judging.dashboard_views import HORIZON_DAYS, burn_down_chart
from judging.models import Assignment, Judgment, OverlapItem
from judging.status import campaign_status
from pooling.models import PoolEntry
from pooling.pool_services import pool_retire
from tests.helpers import make_campaign, make_documents, make_pool, make_user

pytestmark = pytest.mark.django_db
RELEVANT = {"effectiveness": 3, "credibility": 1}
TODAY = date(2026, 11, 23)


def on_day(judgment: Judgment, day: date, seconds: float) -> None:
    """Move a judgment to noon of `day` with its active time."""
    moment = timezone.make_aware(datetime(day.year, day.month, day.day, 12))
    Judgment.objects.filter(pk=judgment.pk).update(created_at=moment, seconds=seconds)


@pytest.fixture
def campaign_setup():
    """Topic 1: ann (primary) and ben (overlap), 10 entries of which 8 drawn;
    topic 2: ben, 5 entries; topic 3: 4 entries, nobody assigned."""
    ann, ben = make_user("ann"), make_user("ben")
    campaign = make_campaign(topics=("1", "2", "3"), judgment_budget=100)
    pool = make_pool(
        campaign,
        {"1": [f"a{i}" for i in range(10)], "2": [f"b{i}" for i in range(5)], "3": list("wxyz")},
    )
    pool.entries.filter(docno__in=["a8", "a9"]).update(sampled=False)
    t1, t2, _ = campaign.topics.all()
    services.assignments_create(pool=pool, topics=[t1], assessors=[ann])
    services.assignments_create(pool=pool, topics=[t2], assessors=[ben])
    overlap = Assignment.objects.create(pool=pool, topic=t1, assessor=ben, kind=Assignment.OVERLAP)
    OverlapItem.objects.bulk_create(
        OverlapItem(assignment=overlap, entry=entry, position=k)
        for k, entry in enumerate(pool.entries.filter(topic=t1, sampled=True).order_by("order"))
    )
    ann_work = Assignment.objects.get(assessor=ann)
    ben_work = Assignment.objects.get(assessor=ben, topic=t2)
    # ann: 3 today (10 s each), 2 four days ago (30 s), 1 twenty days ago (no time).
    for k, (day, seconds, relevance) in enumerate(
        [(0, 10, 1), (0, 10, 0), (0, 10, 2), (4, 30, 0), (4, 30, 1), (20, 0, 0)]
    ):
        made = services.judgment_submit(
            assignment=ann_work, docno=f"a{k}", relevance=relevance, aspects=RELEVANT
        )
        on_day(made, TODAY - timedelta(days=day), seconds)
    # ben: all of topic 2 yesterday, and a0 of topic 1 (overlap) today.
    for k in range(5):
        made = services.judgment_submit(
            assignment=ben_work, docno=f"b{k}", relevance=k % 2, aspects=RELEVANT
        )
        on_day(made, TODAY - timedelta(days=1), 20)
    made = services.judgment_record(
        assessor=ben, topic=t1, docno="a0", relevance=0, aspects=RELEVANT
    )
    on_day(made, TODAY, 40)
    return campaign, pool


def test_topics_count_the_current_plan_once_per_document(campaign_setup):
    campaign, _ = campaign_setup
    status = campaign_status(campaign, today=TODAY)
    rows = {t.topic_id: t for t in status.topics}
    assert (rows["1"].pooled, rows["1"].to_judge, rows["1"].judged) == (10, 8, 6)
    assert rows["1"].relevant == 3  # a0 (ann said 1), a2, a4
    assert rows["1"].assessors == ("ann", "ben")
    assert (rows["2"].to_judge, rows["2"].judged, rows["2"].finished) == (5, 5, True)
    assert (rows["3"].to_judge, rows["3"].judged, rows["3"].assessors) == (4, 0, ())
    assert status.unassigned_topics == ["3"]


def test_a_relevant_label_outside_the_sample_counts_in_neither_judged_nor_relevant(
    campaign_setup,
):
    """A re-plan's lower rate leaves judged documents pooled but undrawn: the
    topic's Relevant column counted them while Judged did not (judged 3, relevant 7)."""
    campaign, _ = campaign_setup
    ann = Assignment.objects.get(assessor__username="ann").assessor
    topic = campaign.topics.get(topic_id="1")
    services.judgment_record(assessor=ann, topic=topic, docno="a8", relevance=2, aspects=RELEVANT)
    row = next(t for t in campaign_status(campaign, today=TODAY).topics if t.topic_id == "1")
    assert (row.judged, row.relevant) == (6, 3)


def test_assessors_show_day_week_total_active_time_and_queue(campaign_setup):
    campaign, _ = campaign_setup
    ann, ben = campaign_status(campaign, today=TODAY).assessors
    assert (ann.username, ann.judged_today, ann.judged_week, ann.judged_total) == (
        "ann",
        3,
        5,
        6,
    )
    assert ann.active_hours == pytest.approx(90 / 3600)
    # Judgments without recorded time count in neither the hours nor the rate.
    assert ann.per_hour == pytest.approx(5 / (90 / 3600))
    assert ann.median_seconds == 10
    assert (ann.queue_done, ann.queue_total) == (6, 8)
    assert (ben.judged_today, ben.judged_week, ben.judged_total) == (1, 6, 6)
    assert (ben.queue_done, ben.queue_total) == (6, 13)  # topic 2, and a0 of the overlap
    assert ben.median_seconds == 20


def test_the_median_of_an_even_count_is_the_mean_of_the_middle_two(campaign_setup):
    """PostgreSQL computes the median in SQL, other databases in Python: the same number."""
    campaign, _ = campaign_setup
    ann_times = [1.0, 2.0, 4.0, 10.0, 30.0, 0.0]  # untimed judgments do not count
    for judgment, seconds in zip(
        Judgment.objects.filter(assessor__username="ann").order_by("docno"), ann_times, strict=True
    ):
        Judgment.objects.filter(pk=judgment.pk).update(seconds=seconds)
    ann = campaign_status(campaign, today=TODAY).assessors[0]
    assert ann.median_seconds == statistics.median([1.0, 2.0, 4.0, 10.0, 30.0]) == 4.0
    Judgment.objects.filter(assessor__username="ann", docno="a4").update(seconds=0)
    ann = campaign_status(campaign, today=TODAY).assessors[0]
    assert ann.median_seconds == statistics.median([1.0, 2.0, 4.0, 10.0]) == 3.0


def test_the_days_add_up_to_the_budget_spent_with_adjudications(campaign_setup):
    campaign, _ = campaign_setup
    topic = campaign.topics.get(topic_id="1")
    services.adjudication_record(
        pool=campaign.pools.get(),
        topic=topic,
        docno="a0",
        relevance=1,
        aspects=RELEVANT,
        reason="ann is right",
        decided_by=make_user("boss", organiser=True),
    )
    status = campaign_status(campaign, today=TODAY)
    assert status.budget.spent == 13
    assert sum(status.daily.values()) == 13
    assert status.daily[TODAY - timedelta(days=20)] == 1
    campaign.budget_counts_adjudications = False
    campaign.save()
    status = campaign_status(campaign, today=TODAY)
    assert sum(status.daily.values()) == status.budget.spent == 12


def test_the_forecast_divides_the_work_left_by_the_weeks_rate(campaign_setup):
    campaign, _ = campaign_setup
    status = campaign_status(campaign, today=TODAY)
    # Left: ann 2 of topic 1, ben 7 of the overlap, topic 3's 4 unassigned.
    assert status.forecast.remaining_work == 13
    # Last 7 days: 4 today, 5 yesterday, 2 four days ago: 11 in 7 days.
    assert status.forecast.rate_per_day == pytest.approx(11 / 7)
    assert status.forecast.finish_date == TODAY + timedelta(days=9)  # ceil(13 / (11/7))
    assert status.forecast.fits_budget is True  # 88 left
    campaign.judgment_budget = 20
    campaign.save()
    status = campaign_status(campaign, today=TODAY)
    assert status.forecast.fits_budget is False  # 8 left for 13
    # ann's 2 fit in the budget's days; ben's overlap of topic 1 does not.
    assert status.late_topics == ["1"]


def test_retired_pools_and_entries_leave_the_plan(campaign_setup):
    campaign, pool = campaign_setup
    PoolEntry.objects.filter(pool=pool, docno__in=["a6", "a7"]).update(retired=True, sampled=False)
    assert campaign_status(campaign, today=TODAY).topics[0].to_judge == 6
    pool_retire(pool=pool)
    status = campaign_status(campaign, today=TODAY)
    assert status.topics == []
    assert status.forecast.remaining_work == 0
    assert status.budget.spent == 12  # the judgments still count


def test_a_document_in_two_pools_counts_once(campaign_setup):
    campaign, _ = campaign_setup
    make_pool(campaign, {"1": ["a0", "a1", "new"]}, name="second")
    rows = {t.topic_id: t for t in campaign_status(campaign, today=TODAY).topics}
    assert (rows["1"].pooled, rows["1"].to_judge, rows["1"].judged) == (11, 9, 6)


def test_the_command_prints_the_json_the_issue_promises(campaign_setup, capsys):
    campaign, _ = campaign_setup
    call_command("campaign_status", "--campaign", campaign.slug, "--format", "json")
    data = json.loads(capsys.readouterr().out)
    assert (data["budget"], data["spent"], data["remaining"]) == (100, 12, 88)
    assert data["topics"]["2"] == {
        "pooled": 5,
        "to_judge": 5,
        "judged": 5,
        "relevant": 2,
        "assessors": ["ben"],
        "finished": True,
    }
    assert set(data["forecast"]) >= {"finish_date", "low", "high", "fits_budget"}
    assert len(data["per_day"]) == 7
    assert data["alerts"]["unassigned_topics"] == ["3"]


def test_the_command_in_text_and_with_an_unknown_campaign(campaign_setup, capsys):
    campaign, _ = campaign_setup
    call_command("campaign_status", "--campaign", campaign.slug)
    out = capsys.readouterr().out
    assert out.startswith("budget 100: 12 spent, 88 left\n")
    assert "topic 3 has no assessor" in out
    with pytest.raises(CommandError, match="no campaign with slug 'nope'"):
        call_command("campaign_status", "--campaign", "nope")


def test_documents_to_judge_without_text_are_an_alert_with_the_list(
    campaign_setup, organiser_client, capsys
):
    campaign, pool = campaign_setup
    # Texts for topics 1 and 2, one of them empty; topic 3's (w x y z) not loaded.
    make_documents(campaign, [f"a{i}" for i in range(10)] + [f"b{i}" for i in range(4)])
    campaign.documents.create(docno="b4", title="A title", text="")
    [alert] = campaign_status(campaign, today=TODAY).without_text
    assert (alert.pool_id, alert.pool_name, alert.docnos) == (pool.pk, "pool", 5)

    call_command("campaign_status", "--campaign", campaign.slug, "--format", "json")
    listed = json.loads(capsys.readouterr().out)["alerts"]["without_text"]
    assert listed == [{"pool": pool.pk, "name": "pool", "documents": 5}]
    call_command("campaign_status", "--campaign", campaign.slug)
    command = f"python manage.py export_pool --pool {pool.pk} --format without-text"
    assert (
        f"alert: pool {pool.pk} (pool): 5 documents to judge without text; list them with "
        + (command)
        in capsys.readouterr().out
    )
    call_command(*command.split()[2:])
    assert capsys.readouterr().out == "b4\nw\nx\ny\nz\n"

    page = organiser_client.get(reverse("judging:campaign_dashboard", args=[campaign.slug]))
    alert_line = page.content.decode().split(f'data-without-text="{pool.pk}">')[1].split("</li>")[0]
    assert "5 documents to judge have no text loaded" in alert_line
    download = reverse("pooling:pool_export", args=[campaign.slug, pool.pk, "without-text"])
    assert download in alert_line
    assert b"".join(organiser_client.get(download).streaming_content) == b"b4\nw\nx\ny\nz\n"

    # Documents not drawn, or taken out of the plan, are nobody's work: no alert for them.
    campaign.documents.filter(docno="b4").update(text="Loaded at last.")
    pool.entries.filter(docno__in=["w", "x"]).update(sampled=False)
    pool.entries.filter(docno__in=["y", "z"]).update(retired=True)
    assert campaign_status(campaign, today=TODAY).without_text == []


def test_without_any_judgment_nothing_is_forecast():
    campaign = make_campaign(topics=("1",))
    make_pool(campaign, {"1": ["d1", "d2"]})
    status = campaign_status(campaign, today=TODAY)
    assert status.forecast.finish_date is None
    assert status.to_dict()["forecast"]["finish_date"] is None
    assert status.to_dict()["remaining"] is None  # no budget


# --------------------------------------------------------------------------
# The page and the API


def test_the_dashboard_shows_the_numbers_and_refreshes_itself(campaign_setup, organiser_client):
    campaign, _ = campaign_setup
    url = reverse("judging:campaign_dashboard", args=[campaign.slug])
    page = organiser_client.get(url).content.decode()
    assert 'data-stat="spent">12<' in page
    assert 'hx-trigger="every 10s"' in page
    assert 'data-assessor="ann"' in page
    assert "Topic 3 has documents to judge and no assessor" in page
    fragment = organiser_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<div id="dashboard-live"')
    assert "<html" not in fragment


def test_assessors_and_strangers_do_not_see_the_dashboard(campaign_setup, assessor_client, client):
    campaign, _ = campaign_setup
    url = reverse("judging:campaign_dashboard", args=[campaign.slug])
    assert assessor_client.get(url).status_code == 403
    api = reverse("api-campaign-status", args=[campaign.slug])
    assert assessor_client.get(api).status_code == 403
    client.logout()
    assert client.get(api).status_code in (401, 403)


def test_the_api_answers_what_the_command_prints(campaign_setup, organiser_client, capsys):
    campaign, _ = campaign_setup
    answer = organiser_client.get(reverse("api-campaign-status", args=[campaign.slug]))
    assert answer.status_code == 200
    call_command("campaign_status", "--campaign", campaign.slug, "--format", "json")
    assert answer.json() == json.loads(capsys.readouterr().out)
    missing = organiser_client.get(reverse("api-campaign-status", args=["nope"]))
    assert missing.status_code == 404


def test_the_burn_down_clips_a_far_forecast_and_says_so(campaign_setup):
    campaign, _ = campaign_setup
    status = campaign_status(campaign, today=TODAY)
    chart = burn_down_chart(status)
    assert not chart["off_chart"]
    assert "line" in chart["forecast"]
    slow = replace(
        status,
        forecast=progress.forecast(
            status.daily, today=TODAY, remaining_work=1000, remaining_budget=None
        ),
    )
    chart = burn_down_chart(slow)
    assert slow.forecast.finish_date > TODAY + timedelta(days=HORIZON_DAYS)
    assert chart["off_chart"]
    last_x = float(chart["forecast"]["line"].split()[-1].split(",")[0])
    assert last_x == pytest.approx(chart["right"])


def test_a_replans_forecast_moves_the_work_left_at_the_same_rate(campaign_setup):
    campaign, _ = campaign_setup
    campaign.judgment_budget = 20
    campaign.save()
    status = campaign_status(campaign, today=TODAY)
    cut = status.forecast_with(-6)  # 13 - 6 = 7 left, at 11/7 a day, 8 in the budget
    assert (cut.remaining_work, cut.rate_per_day) == (7, status.forecast.rate_per_day)
    assert cut.finish_date == TODAY + timedelta(days=5)  # ceil(7 / (11/7))
    assert cut.fits_budget is True
    assert status.forecast_with(-100).remaining_work == 0
    assert status.forecast_with(+10).fits_budget is False


def test_the_replan_preview_loads_the_forecast_with_the_change(campaign_setup, organiser_client):
    campaign, _ = campaign_setup
    url = reverse("judging:forecast_change", args=[campaign.slug])
    page = organiser_client.get(url, {"change": "-6"}).content.decode()
    assert 'data-left="7"' in page  # 13 left now
    assert "The budget (88 left) covers it." in page
    assert organiser_client.get(url, {"change": "lots"}).status_code == 400
    assert organiser_client.get(url, {"change": str(10**12)}).status_code == 400


def test_campaign_status_starts_without_pandas():
    """People run `campaign_status` in shell loops: pandas alone would cost it half a
    second. It loads with the agreement alerts, which the shared cache keeps."""
    code = (
        "import sys, django; django.setup(); "
        "import judging.management.commands.campaign_status; "
        "sys.exit(sorted({'pandas', 'pyarrow', 'sklearn'} & set(sys.modules)) or None)"
    )
    env = {"DJANGO_SETTINGS_MODULE": "config.settings", "PATH": "/usr/bin:/bin"}
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, check=False, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()


def test_an_assessor_who_disagrees_on_shared_documents_is_alerted_without_pandas(monkeypatch):
    """Four assessors judge the same 12 documents: three agree, cat labels at random. The alert comes from the numpy-only agreement statistics: with pandas
    made unimportable, the status still computes it (pandas would cost the command
    half a second each time a judgment changes)."""
    campaign = make_campaign(topics=("1",))
    docs = [f"d{k}" for k in range(12)]
    pool = make_pool(campaign, {"1": docs})
    (topic,) = campaign.topics.all()
    truth = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]
    cat = [2, 0, 1, 1, 2, 0, 2, 0, 1, 1, 2, 0]
    for name, labels in (("ann", truth), ("ben", truth), ("dan", truth), ("cat", cat)):
        assessor = make_user(name)
        for docno, relevance in zip(docs, labels, strict=True):
            aspects = RELEVANT if relevance else {}
            services.judgment_record(
                assessor=assessor, topic=topic, docno=docno, relevance=relevance, aspects=aspects
            )
    assert pool.entries.count() == 12
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now fails
    alerts = campaign_status(campaign, today=TODAY).assessor_alerts
    assert alerts == {"cat": "agreement: mean cohen_kappa below 0.4"}


def test_forecast_dates_on_the_dashboard_and_the_replan_preview_show_their_year(
    organiser_client,
):
    """Issue 23: "Finished Jun 28" was 28 Jun 2033; "likely Oct 8 or later"."""
    ann = make_user("ann")
    campaign = make_campaign(topics=("1",))
    pool = make_pool(campaign, {"1": [f"d{k}" for k in range(800)]})
    [work] = services.assignments_create(pool=pool, topics=campaign.topics.all(), assessors=[ann])
    services.judgment_submit(assignment=work, docno="d0", relevance=0, aspects={})
    forecast = campaign_status(campaign).forecast  # 799 left at 1/7 a day: years away
    assert forecast.finish_date.year > timezone.localdate().year
    dashboard = reverse("judging:campaign_dashboard", args=[campaign.slug])
    page = organiser_client.get(dashboard).content.decode()
    finish, low = progress.date_text(forecast.finish_date), progress.date_text(forecast.low)
    assert f'<dd data-stat="finish">{finish}</dd>' in page
    assert f"finished on {finish}, between {low} and an open date" in page
    change = reverse("judging:forecast_change", args=[campaign.slug])
    after = campaign_status(campaign).forecast_with(-99)
    preview = organiser_client.get(change, {"change": "-99"}).content.decode()
    assert f"<strong data-after>{progress.date_text(after.finish_date)}</strong>" in preview
    assert f"(likely {progress.date_text(after.low)} or later)" in preview
    assert f"instead of {finish}:" in preview


def test_the_dashboard_folds_one_alert_per_topic_into_one_line_with_the_count(organiser_client):
    """Issue 23: "Topic X will not be finished within the budget" x 20."""
    ann = make_user("ann")
    campaign = make_campaign(topics=("1", "2", "3", "4", "5"), judgment_budget=3)
    pool = make_pool(campaign, {t: [f"{t}-{k}" for k in range(10)] for t in "12345"})
    topics = list(campaign.topics.order_by("position"))
    work = services.assignments_create(pool=pool, topics=topics[:3], assessors=[ann])
    for docno in ("1-0", "1-1"):
        services.judgment_submit(assignment=work[0], docno=docno, relevance=0, aspects={})
    status = campaign_status(campaign)
    assert status.late_topics == ["1", "2", "3"]
    assert status.unassigned_topics == ["4", "5"]
    url = reverse("judging:campaign_dashboard", args=[campaign.slug])
    page = organiser_client.get(url).content.decode()
    assert "will not be finished within the budget" in page
    assert page.count("will not be finished within the budget") == 1
    assert (
        '<li class="warn" data-alert="late"><details><summary>3 topics will not be finished '
        'within the budget at the current plan.</summary><p class="topic-list">1, 2, 3</p>'
    ) in page
    assert page.count("no assessor") == 1
    assert "<summary>2 topics have documents to judge and no assessor.</summary>" in page
    assert '<p class="topic-list">4, 5</p>' in page


def test_the_burn_down_has_round_y_ticks_and_x_labels_inside_with_the_year(campaign_setup):
    """Issue 23: a "6,065" tick beside the 6,000 budget line; the last date cut off."""
    from workbench.core.charts import CHAR_WIDTH

    campaign, _ = campaign_setup
    status = campaign_status(campaign, today=TODAY)
    slow = replace(
        status,
        forecast=progress.forecast(
            status.daily, today=TODAY, remaining_work=5965, remaining_budget=None
        ),
    )
    chart = burn_down_chart(slow)  # the plan: 6,065 judgments in all
    labels = [tick["label"] for tick in chart["y_ticks"]]
    assert labels == [0, 2000, 4000, 6000, 8000]
    labels = [tick["label"] for tick in chart["x_ticks"]]
    assert labels[0] == "Nov 3 2026"  # the year on the first date ...
    assert labels[-1] == "Jan 2 2027"  # ... and where it changes (the chart runs 42 days on)
    assert sum(label.endswith(" 2026") for label in labels) == 1
    for tick in chart["x_ticks"]:
        width = len(tick["label"]) * CHAR_WIDTH
        start = tick["x"] - {"start": 0, "middle": width / 2, "end": width}[tick["anchor"]]
        assert start >= 0
        assert start + width <= chart["width"]
