"""Organiser pages: campaigns, uploads with inline errors, and who may see them."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from pooling.models import Campaign, Document, Run, Topic
from tests.helpers import make_campaign, run_text
from workbench.core.label_schema import SCHEMA_PRESETS

pytestmark = pytest.mark.django_db


def detail_url(campaign: Campaign) -> str:
    return reverse("pooling:campaign_detail", args=[campaign.slug])


def test_campaign_list_and_detail_show_counts_and_run_summaries(organiser_client):
    campaign = make_campaign()
    organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {"files": [SimpleUploadedFile("bm25.txt", run_text("bm25", {"301": ["d1", "d2"]}))]},
    )
    page = organiser_client.get(reverse("pooling:campaign_list")).content.decode()
    assert "TREC-X" in page
    page = organiser_client.get(detail_url(campaign)).content.decode()
    assert "bm25" in page
    assert "bm25.txt" in page
    # The run has no lines for topics 302 and 303: the summary says so.
    assert "302, 303" in page


CUSTOM_BINARY = '{"relevance": {"grades": [{"value": 0, "name": "No", "key": "0"}, {"value": 1, "name": "Yes", "key": "1"}]}}'


def campaign_form(**fields: str) -> dict[str, str]:
    return {
        "name": "CLEF eHealth",
        "slug": "clef-ehealth",
        "task_kind": "ranked",
        "description": "",
        "guidelines": "Be careful.",
        "judgment_budget": "2000",
        "label_schema": "decision",
        "custom_schema": "",
        **fields,
    }


def checked_choice(page: str) -> list[str]:
    return re.findall(r'<input type="radio" name="label_schema" value="([^"]+)"[^>]*checked', page)


@pytest.mark.parametrize("preset", sorted(SCHEMA_PRESETS))
def test_create_campaign_from_a_preset(organiser_client, organiser, preset):
    response = organiser_client.post(
        reverse("pooling:campaign_create"), campaign_form(label_schema=preset)
    )
    campaign = Campaign.objects.get(slug="clef-ehealth")
    assert response.url == detail_url(campaign)
    assert campaign.created_by == organiser
    assert campaign.guidelines == "Be careful."
    assert campaign.judgment_budget == 2000
    assert campaign.label_schema == SCHEMA_PRESETS[preset].data


def test_the_form_shows_every_preset_as_a_table_and_decision_is_chosen(organiser_client):
    page = organiser_client.get(reverse("pooling:campaign_create")).content.decode()
    assert checked_choice(page) == ["decision"]
    for preset in SCHEMA_PRESETS.values():
        assert f'value="{preset.name}"' in page
        assert preset.label in page
    # Graded 0-3's top grade, its key, and the Decision track's aspect questions.
    assert "Perfectly relevant" in page
    assert "<kbd>3</kbd>" in page
    assert "What does the document say about the treatment?" in page
    assert "Custom schema (JSON)" in page
    assert '<details class="custom-schema">' in page


def test_create_campaign_from_custom_json(organiser_client):
    organiser_client.post(
        reverse("pooling:campaign_create"),
        campaign_form(label_schema="custom", custom_schema=CUSTOM_BINARY),
    )
    assert Campaign.objects.get().schema.relevance.values == (0, 1)


def test_custom_json_is_ignored_when_a_preset_is_chosen(organiser_client):
    organiser_client.post(
        reverse("pooling:campaign_create"),
        campaign_form(label_schema="graded-0-3", custom_schema="{not json"),
    )
    assert Campaign.objects.get().label_schema == SCHEMA_PRESETS["graded-0-3"].data


@pytest.mark.parametrize(
    ("custom", "message"),
    [
        (
            '{"relevance": {"grades": []}}',
            "relevance: &#x27;grades&#x27; must list at least two grades",
        ),
        ("{not json", "This is not valid JSON: Expecting property name"),
        ("", "Paste a schema, or choose a preset."),
    ],
)
def test_create_campaign_shows_custom_schema_errors_and_keeps_the_choice(
    organiser_client, custom, message
):
    response = organiser_client.post(
        reverse("pooling:campaign_create"),
        campaign_form(label_schema="custom", custom_schema=custom),
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert message in page
    assert checked_choice(page) == ["custom"]
    assert '<details class="custom-schema" open>' in page
    assert "CLEF eHealth" in page, "the other fields keep their values"
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("choice", ["", "graded-0-9"])
def test_create_campaign_needs_a_known_schema_choice(organiser_client, choice):
    response = organiser_client.post(
        reverse("pooling:campaign_create"), campaign_form(label_schema=choice)
    )
    assert response.status_code == 400
    assert not Campaign.objects.exists()


def test_create_campaign_refuses_a_slug_in_use(organiser_client):
    make_campaign("clef-ehealth")
    response = organiser_client.post(reverse("pooling:campaign_create"), campaign_form())
    assert response.status_code == 400
    assert "Campaign with this Slug already exists." in response.content.decode()
    assert Campaign.objects.count() == 1


# --------------------------------------------------------------------------
# Editing a campaign


def edit_url(campaign: Campaign) -> str:
    return reverse("pooling:campaign_edit", args=[campaign.slug])


def edit_form(**fields: str) -> dict[str, str]:
    form = campaign_form(
        **({"name": "Renamed", "guidelines": "New rules.", "judgment_budget": ""} | fields)
    )
    del form["slug"]
    return form


def judge_one(campaign: Campaign, assessor) -> None:
    from judging import services as judging_services

    judging_services.judgment_record(
        assessor=assessor, topic=campaign.topics.first(), docno="d1", relevance=0, aspects={}
    )


def test_the_edit_page_starts_from_the_campaign(organiser_client):
    campaign = make_campaign(
        guidelines="Old rules.", label_schema=SCHEMA_PRESETS["graded-0-3"].schema()
    )
    page = organiser_client.get(edit_url(campaign)).content.decode()
    assert "Old rules." in page
    assert 'value="TREC-X"' in page
    assert checked_choice(page) == ["graded-0-3"]
    assert 'name="slug"' not in page, "the slug names files and URLs: it stays"


def test_the_edit_page_opens_a_custom_schema_as_json(organiser_client):
    campaign = make_campaign(label_schema=json.loads(CUSTOM_BINARY))
    page = organiser_client.get(edit_url(campaign)).content.decode()
    assert checked_choice(page) == ["custom"]
    assert '<details class="custom-schema" open>' in page
    assert "&quot;Yes&quot;" in page


def test_edit_a_campaign(organiser_client):
    campaign = make_campaign(judgment_budget=100)
    response = organiser_client.post(edit_url(campaign), edit_form(label_schema="binary"))
    assert response.url == detail_url(campaign)
    campaign.refresh_from_db()
    assert (campaign.name, campaign.guidelines, campaign.judgment_budget) == (
        "Renamed",
        "New rules.",
        None,
    )
    assert campaign.label_schema == SCHEMA_PRESETS["binary"].data


def test_the_schema_of_a_judged_campaign_cannot_change(organiser_client, assessor):
    campaign = make_campaign()
    judge_one(campaign, assessor)
    page = organiser_client.get(edit_url(campaign)).content.decode()
    assert "already has 1 judgment" in page, "said before anyone tries"
    response = organiser_client.post(edit_url(campaign), edit_form(label_schema="graded-0-3"))
    page = response.content.decode()
    assert response.status_code == 400
    assert "its label schema can no longer change" in page
    assert checked_choice(page) == ["graded-0-3"]
    campaign.refresh_from_db()
    assert campaign.name == "TREC-X"
    assert campaign.label_schema == SCHEMA_PRESETS["decision"].data


def test_a_judged_campaign_can_still_be_renamed(organiser_client, assessor):
    campaign = make_campaign()
    judge_one(campaign, assessor)
    response = organiser_client.post(edit_url(campaign), edit_form(label_schema="decision"))
    assert response.status_code == 302
    campaign.refresh_from_db()
    assert campaign.name == "Renamed"


def test_edit_form_errors_are_shown_and_nothing_changes(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(edit_url(campaign), edit_form(name="", judgment_budget="-3"))
    page = response.content.decode()
    assert response.status_code == 400
    assert "This field is required." in page
    assert "Ensure this value is greater than or equal to 0." in page
    campaign.refresh_from_db()
    assert campaign.name == "TREC-X"


def test_editing_an_unknown_campaign_is_404(organiser_client):
    assert organiser_client.get(reverse("pooling:campaign_edit", args=["nope"])).status_code == 404


def test_the_campaign_page_shows_the_schema_as_tables(organiser_client):
    campaign = make_campaign(label_schema=SCHEMA_PRESETS["graded-0-3"].schema())
    page = organiser_client.get(detail_url(campaign)).content.decode()
    assert SCHEMA_PRESETS["graded-0-3"].label in page
    assert "<td>Perfectly relevant</td>" in page
    assert "<kbd>3</kbd>" in page
    assert '"grades"' not in page
    assert "&quot;grades&quot;" not in page
    assert f'href="{edit_url(campaign)}"' in page


def test_the_campaign_page_shows_a_custom_schema_and_its_aspects(organiser_client):
    schema = SCHEMA_PRESETS["decision"].schema()
    schema["aspects"][1]["when"] = "always"
    campaign = make_campaign(label_schema=schema)
    page = organiser_client.get(detail_url(campaign)).content.decode()
    assert "Custom schema" in page
    assert "asked when relevant" in page
    assert "always asked" in page
    assert "Is the document credible?" in page


def test_run_upload_errors_are_shown_inline_and_nothing_is_stored(organiser_client):
    campaign = make_campaign()
    bad = SimpleUploadedFile("bad.txt", b"301 Q0 d1 1 2 t\n999 Q0 d2 2 1 t\n301 Q0 d1 3 0 t\n")
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]), {"files": [bad]}
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "Rejected: nothing was stored." in page
    assert "bad.txt:2: topic &#x27;999&#x27; is not a topic of this campaign" in page
    assert "bad.txt:3: docno &#x27;d1&#x27; appears twice in topic &#x27;301&#x27;" in page
    assert not Run.objects.exists()


def test_htmx_upload_error_returns_only_the_upload_card(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {"files": [SimpleUploadedFile("empty.txt", b"")]},
        headers={"HX-Request": "true"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert page.lstrip().startswith('<section class="card" id="run-upload">')
    assert "empty.txt: empty file: no run lines" in page
    assert "<html" not in page


def test_keep_valid_upload_says_what_was_stored_and_what_was_rejected(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {
            "files": [
                SimpleUploadedFile("good.txt", run_text("good", {"301": ["d1"]})),
                SimpleUploadedFile("bad.txt", b"999 Q0 d1 1 1 bad\n"),
            ],
            "keep_valid": "on",
        },
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "Stored 1 run(s): good." in page
    assert "These files were rejected and not stored." in page
    assert "bad.txt:1: topic &#x27;999&#x27; is not a topic of this campaign" in page
    assert "nothing was stored" not in page
    # The whole page, with the run list showing the stored run.
    assert '<td class="mono">good</td>' in page
    assert list(Run.objects.values_list("tag", flat=True)) == ["good"]


def test_htmx_keep_valid_upload_replaces_the_page_content_in_place(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {
            "files": [
                SimpleUploadedFile("good.txt", run_text("good", {"301": ["d1"]})),
                SimpleUploadedFile("bad.txt", b""),
            ],
            "keep_valid": "on",
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert response.headers["HX-Retarget"] == "main"
    assert response.headers["HX-Reselect"] == "main"
    assert response.headers["HX-Reswap"] == "outerHTML"
    assert '<td class="mono">good</td>' in response.content.decode()


def test_keep_valid_with_every_file_rejected_says_nothing_was_stored(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {"files": [SimpleUploadedFile("bad.txt", b"")], "keep_valid": "on"},
    )
    assert response.status_code == 400
    assert "Rejected: nothing was stored." in response.content.decode()


def test_answers_upload_sets_and_shows_each_topics_answer(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:answers_upload", args=[campaign.slug]),
        {"file": SimpleUploadedFile("topics_efficacy.txt", b"301 1\n302 -1\n303 0\n")},
    )
    assert response.status_code == 302
    page = organiser_client.get(detail_url(campaign)).content.decode()
    assert "Accepted answers from topics_efficacy.txt: 3 answers set, 3 of them changed." in page
    answers = [
        cell for cell in ("helpful", "not helpful", "inconclusive") if f"<td>{cell}</td>" in page
    ]
    assert answers == ["helpful", "not helpful", "inconclusive"]


def test_answers_upload_errors_are_shown_inline(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:answers_upload", args=[campaign.slug]),
        {"file": SimpleUploadedFile("topics_efficacy.txt", b"301 1\n999 0\n")},
        headers={"HX-Request": "true"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert page.lstrip().startswith('<section class="card" id="answer-upload">')
    assert "topics_efficacy.txt:2: topic &#x27;999&#x27; is not a topic of this campaign" in page
    assert not Topic.objects.filter(extra__has_key="answer").exists()


def test_htmx_upload_success_redirects_to_refresh_the_page(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {"files": [SimpleUploadedFile("r.txt", run_text("r", {"301": ["d1"]}))]},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 204
    assert response.headers["HX-Redirect"] == detail_url(campaign)


def test_several_run_files_upload_at_once(organiser_client):
    campaign = make_campaign()
    files = [SimpleUploadedFile(f"{tag}.txt", run_text(tag, {"301": ["d1"]})) for tag in ("a", "b")]
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]), {"files": files}, follow=True
    )
    assert "Stored 2 run(s): a, b." in response.content.decode()


def test_topic_and_document_uploads(organiser_client):
    campaign = make_campaign(topics=())
    organiser_client.post(
        reverse("pooling:topics_upload", args=[campaign.slug]),
        {"file": SimpleUploadedFile("t.jsonl", b'{"id": "1", "title": "one"}\n'), "format": ""},
    )
    organiser_client.post(
        reverse("pooling:documents_upload", args=[campaign.slug]),
        {"file": SimpleUploadedFile("d.tsv", b"d1\tTitle\tText\n"), "format": "tsv"},
    )
    assert list(Topic.objects.values_list("topic_id", flat=True)) == ["1"]
    assert list(Document.objects.values_list("docno", flat=True)) == ["d1"]


def test_document_upload_error_is_shown_and_nothing_stored(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:documents_upload", args=[campaign.slug]),
        {"file": SimpleUploadedFile("d.jsonl", b'{"docno": "d1"}\n{oops\n'), "format": ""},
    )
    assert response.status_code == 400
    assert "d.jsonl:2: not valid JSON" in response.content.decode()
    assert not Document.objects.exists()


def test_oversized_upload_is_refused(organiser_client, settings):
    settings.WORKBENCH_MAX_UPLOAD_BYTES = 10
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {"files": [SimpleUploadedFile("big.txt", run_text("big", {"301": ["d1", "d2"]}))]},
    )
    assert response.status_code == 413
    assert "big.txt: over the upload limit of 10 bytes per file" in response.content.decode()
    assert not Run.objects.exists()


ORGANISER_PAGES = [
    ("pooling:campaign_list", []),
    ("pooling:campaign_create", []),
    ("pooling:campaign_detail", ["trec-x"]),
    ("pooling:campaign_edit", ["trec-x"]),
]


@pytest.mark.parametrize(("name", "args"), ORGANISER_PAGES)
def test_assessors_get_403_on_organiser_pages(assessor_client, name, args):
    make_campaign()
    assert assessor_client.get(reverse(name, args=args)).status_code == 403


@pytest.mark.parametrize(
    "name", ["pooling:runs_upload", "pooling:topics_upload", "pooling:documents_upload"]
)
def test_assessors_cannot_upload(assessor_client, name):
    campaign = make_campaign()
    response = assessor_client.post(
        reverse(name, args=[campaign.slug]),
        {"files": [SimpleUploadedFile("r.txt", run_text("r", {"301": ["d1"]}))]},
    )
    assert response.status_code == 403
    assert not Run.objects.exists()


def test_assessors_cannot_edit_a_campaign(assessor_client):
    campaign = make_campaign()
    response = assessor_client.post(edit_url(campaign), edit_form(label_schema="binary"))
    assert response.status_code == 403
    campaign.refresh_from_db()
    assert (campaign.name, campaign.label_schema) == ("TREC-X", SCHEMA_PRESETS["decision"].data)


@pytest.mark.parametrize(("name", "args"), ORGANISER_PAGES)
def test_anonymous_users_are_sent_to_login(client, name, args):
    make_campaign()
    response = client.get(reverse(name, args=args))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_admin_is_open_to_organisers_only(organiser_client, assessor, client):
    assert organiser_client.get(reverse("admin:pooling_run_changelist")).status_code == 200
    assert organiser_client.get(reverse("admin:auth_user_add")).status_code == 200
    client.force_login(assessor)
    assert client.get(reverse("admin:pooling_run_changelist")).status_code == 302


def test_staff_users_are_organisers(client, django_user_model):
    staff = django_user_model.objects.create_user("s", password="p", is_staff=True)
    client.force_login(staff)
    assert client.get(reverse("pooling:campaign_list")).status_code == 200


def test_home_sends_each_role_to_its_start_page(organiser_client, client, assessor):
    assert organiser_client.get(reverse("home")).url == reverse("pooling:campaign_list")
    client.force_login(assessor)
    assert client.get(reverse("home")).url == reverse("judging:assessor_home")


def test_login_and_logout(client, assessor):
    from tests.helpers import PASSWORD

    page = client.get(reverse("login"))
    assert page.status_code == 200
    response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get(reverse("home")).status_code == 302
    client.post(reverse("logout"))
    assert client.get(reverse("home")).url.startswith(reverse("login"))
    bad = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert "didn't match" in bad.content.decode()


def test_campaign_page_shows_judgments_made_and_budget_left(organiser_client, assessor):
    from judging import services as judging

    campaign = make_campaign(judgment_budget=10)
    judging.judgment_record(
        assessor=assessor, topic=campaign.topics.first(), docno="d1", relevance=0, aspects={}
    )
    page = organiser_client.get(detail_url(campaign)).content.decode()
    assert "<dt>Judgments made</dt><dd>1</dd>" in page
    assert '<dt>Budget left</dt><dd><span title="of 10">9</span></dd>' in page


def test_unpooled_runs_are_replaced_or_deleted_from_the_campaign_page(organiser_client):
    from pooling import run_services

    campaign = make_campaign()
    run = run_services.runs_import(
        campaign=campaign, uploads=[run_services.RunUpload("r.txt", run_text("r", {"301": ["d1"]}))]
    )[0]
    page = organiser_client.get(detail_url(campaign)).content.decode()
    assert reverse("pooling:run_replace", args=[campaign.slug, run.pk]) in page
    response = organiser_client.post(
        reverse("pooling:run_replace", args=[campaign.slug, run.pk]),
        {"file": SimpleUploadedFile("fixed.txt", run_text("r", {"301": ["d1", "d2"]}))},
        follow=True,
    )
    assert "Run r replaced by r from fixed.txt." in response.content.decode()
    new = Run.objects.get()
    assert new.line_count == 2

    bad = organiser_client.post(
        reverse("pooling:run_replace", args=[campaign.slug, new.pk]),
        {"file": SimpleUploadedFile("worse.txt", b"999 Q0 d1 1 1 r\n")},
    )
    assert bad.status_code == 400
    assert "worse.txt:1: topic &#x27;999&#x27; is not a topic of this campaign" in (
        bad.content.decode()
    )
    assert Run.objects.get().pk == new.pk

    assert (
        organiser_client.get(
            reverse("pooling:run_delete", args=[campaign.slug, new.pk])
        ).status_code
        == 405
    )
    response = organiser_client.post(
        reverse("pooling:run_delete", args=[campaign.slug, new.pk]), follow=True
    )
    assert "Run r deleted." in response.content.decode()
    assert not Run.objects.exists()


def test_a_pooled_run_offers_no_replace_and_refuses_deletion(organiser_client):
    from pooling import pool_services, run_services
    from pooling.core.spec import PoolSpec

    campaign = make_campaign()
    run = run_services.runs_import(
        campaign=campaign, uploads=[run_services.RunUpload("r.txt", run_text("r", {"301": ["d1"]}))]
    )[0]
    pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    page = organiser_client.get(detail_url(campaign)).content.decode()
    assert "in 1 pool" in page
    assert reverse("pooling:run_delete", args=[campaign.slug, run.pk]) not in page
    response = organiser_client.post(
        reverse("pooling:run_delete", args=[campaign.slug, run.pk]), follow=True
    )
    assert "Not deleted: run r is in pool" in response.content.decode()
    assert Run.objects.exists()


def test_runs_of_another_campaign_are_404(organiser_client):
    from pooling import run_services

    make_campaign()
    other = make_campaign("other")
    run = run_services.runs_import(
        campaign=other, uploads=[run_services.RunUpload("r.txt", run_text("r", {"301": ["d1"]}))]
    )[0]
    url = reverse("pooling:run_delete", args=["trec-x", run.pk])
    assert organiser_client.post(url).status_code == 404
    assert Run.objects.exists()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("docs.jsonl", b'{"docno": "d1", "text": "a\\u0000b"}\n'),
        ("docs.sgml", bytes(range(256)) * 40),
        ("docs.jsonl", b'{"docno": "' + b"d" * 600 + b'"}\n'),
    ],
)
def test_hostile_document_files_are_a_400_and_store_nothing(organiser_client, name, data):
    campaign = make_campaign()
    response = organiser_client.post(
        reverse("pooling:documents_upload", args=[campaign.slug]),
        {"file": SimpleUploadedFile(name, data)},
    )
    assert response.status_code == 400
    assert "Rejected: nothing was stored." in response.content.decode()
    assert not Document.objects.exists()


# --------------------------------------------------------------------------
# Task kinds


def test_create_a_task_campaign_and_its_page_is_the_task_page(organiser_client):
    page = organiser_client.get(reverse("pooling:campaign_create")).content.decode()
    assert '<option value="scifact">SciFact claim verification</option>' in page
    response = organiser_client.post(
        reverse("pooling:campaign_create"), campaign_form(task_kind="scifact")
    )
    campaign = Campaign.objects.get()
    assert campaign.task_kind == "scifact"
    response = organiser_client.get(response.url)
    assert response.url == reverse("scoring:task_campaign", args=[campaign.slug])


def test_the_task_kind_of_a_campaign_with_runs_cannot_change(organiser_client):
    campaign = make_campaign()
    organiser_client.post(
        reverse("pooling:runs_upload", args=[campaign.slug]),
        {"files": [SimpleUploadedFile("bm25.txt", run_text("bm25", {"301": ["d1"]}))]},
    )
    page = organiser_client.get(edit_url(campaign)).content.decode()
    assert "already has 1 run: its task kind can no longer change" in page
    response = organiser_client.post(edit_url(campaign), edit_form(task_kind="codiesp"))
    assert response.status_code == 400
    campaign.refresh_from_db()
    assert campaign.task_kind == "ranked"


def test_each_field_of_the_campaign_page_has_an_id_of_its_own(organiser_client):
    """The topic, answer, document and run forms all have a `file`: with the same
    id, clicking a label focused another form's field."""
    campaign = make_campaign()
    page = organiser_client.get(detail_url(campaign)).content.decode()
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    for label_for in re.findall(r'<label for="([^"]+)"', page):
        assert label_for in ids
    assert 'id="topics_file"' in page
    assert 'id="documents_file"' in page
    assert 'id="runs_files"' in page
