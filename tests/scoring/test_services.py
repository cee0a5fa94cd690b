"""Task campaigns' writes: gold files and submissions checked whole, stored with
their files, or refused with `file:line: reason` and nothing stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError

from pooling import services as pooling_services
from scoring import services
from scoring.models import TaskGold, TaskSubmission
from tests.helpers import (
    CODIESP_CODES,
    CODIESP_RUN,
    SCIFACT_CLAIMS,
    SCIFACT_PREDICTIONS,
    make_submission,
    make_task_campaign,
    make_task_gold,
    make_user,
)
from workbench.core.problems import InputError

pytestmark = pytest.mark.django_db


def stored_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_gold_is_stored_with_its_file_and_valid_codes():
    campaign = make_task_campaign()
    olivia = make_user("olivia", organiser=True)
    gold = services.task_gold_upload(
        campaign=campaign,
        subtask="D",
        gold=services.TaskUpload("gold-d.tsv", b"a\tx1\nb\tx2\n"),
        codes=[
            services.TaskUpload("codes-d.tsv", CODIESP_CODES),
            services.TaskUpload("more.tsv", b"Y1\textra\n"),
        ],
        uploaded_by=olivia,
    )
    assert (gold.subtask, gold.original_name, gold.document_count) == ("D", "gold-d.tsv", 2)
    assert (gold.codes_names, gold.code_count, gold.uploaded_by) == (
        ["codes-d.tsv", "more.tsv"],
        5,
        olivia,
    )
    assert gold.file.read() == b"a\tx1\nb\tx2\n"
    assert gold.codes_file.read() == b"x1\nx2\nx3\nx9\ny1\n"  # lower-cased, sorted, distinct
    assert stored_files() == ["tasks/codiesp/D/codes.tsv", "tasks/codiesp/D/gold-d.tsv"]


def test_a_bad_gold_is_refused_with_every_problem_and_nothing_is_stored():
    campaign = make_task_campaign()
    with pytest.raises(InputError) as error:
        services.task_gold_upload(
            campaign=campaign,
            subtask="X",
            gold=services.TaskUpload("gold-x.tsv", b"a\tD\tx1\tt\t10 5\n"),
            codes=[services.TaskUpload("codes.tsv", b"\tno code\n")],
        )
    assert str(error.value).splitlines() == [
        "gold-x.tsv:1: the reference ends (5) before it starts (10)",
        "codes.tsv:1: empty code (the official scripts crash on an empty one)",
    ]
    assert not TaskGold.objects.exists()
    assert stored_files() == []


def test_a_codiesp_gold_needs_its_valid_codes():
    with pytest.raises(InputError, match=r"^gold.tsv: CodiEsp D needs valid codes"):
        make_task_gold(make_task_campaign(), codes=())


def test_a_new_gold_replaces_the_old_and_its_files():
    campaign = make_task_campaign()
    first = make_task_gold(campaign)
    second = make_task_gold(campaign, gold=b"a\tx1\n")
    assert list(TaskGold.objects.values_list("pk", "document_count")) == [(second.pk, 1)]
    assert first.pk != second.pk
    assert second.file.read() == b"a\tx1\n"
    assert len(stored_files()) == 2


def test_a_subtask_of_another_task_is_refused():
    campaign = make_task_campaign("sf", task_kind="scifact")
    with pytest.raises(ValidationError, match="SF has no subtask 'D'"):
        make_task_gold(campaign)


def test_a_ranked_campaign_has_no_subtasks():
    campaign = pooling_services.campaign_create(name="TREC", slug="trec")
    with pytest.raises(ValidationError, match="ranked retrieval campaign"):
        make_task_gold(campaign)


def test_a_submission_is_stored_under_its_name_or_its_file_stem():
    campaign = make_task_campaign()
    make_task_gold(campaign)
    named = make_submission(campaign, "team-a", CODIESP_RUN)
    assert (named.name, named.original_name, named.document_count) == ("team-a", "team-a.txt", 3)
    stem = services.task_submission_upload(
        campaign=campaign, subtask="D", upload=services.TaskUpload("run.2.tsv", CODIESP_RUN)
    )
    assert stem.name == "run.2"
    assert stem.file.read() == CODIESP_RUN


def test_a_submission_waits_for_its_gold():
    campaign = make_task_campaign()
    make_task_gold(campaign, subtask="D")
    with pytest.raises(InputError, match=r"^p.txt: no gold for Procedure coding \(P\) yet"):
        make_submission(campaign, "p", CODIESP_RUN, subtask="P")


def test_a_bad_submission_is_refused_and_nothing_is_stored():
    campaign = make_task_campaign()
    make_task_gold(campaign)
    before = stored_files()
    with pytest.raises(InputError) as error:
        make_submission(campaign, "bad", b"a\tx1\nb x2\n\n")
    assert str(error.value) == (
        "bad.txt:2: expected 2 tab-separated columns (case<TAB>code), found 1 (the official MAP"
        " script stops with an ImportError or a parser error, and comp_f1_diag_proc.py reads a"
        " 3-column file as columns 2 and 3)"
    )
    assert not TaskSubmission.objects.exists()
    assert stored_files() == before


def test_a_name_is_used_once_per_subtask():
    campaign = make_task_campaign()
    make_task_gold(campaign, subtask="D")
    make_task_gold(campaign, subtask="P")
    make_submission(campaign, "team-a", CODIESP_RUN)
    make_submission(campaign, "team-a", CODIESP_RUN, subtask="P")
    with pytest.raises(InputError, match="a submission named 'team-a' is already stored"):
        make_submission(campaign, "team-a", CODIESP_RUN)
    assert TaskSubmission.objects.count() == 2


def test_a_scifact_submission_is_checked_against_the_gold_claims():
    campaign = make_task_campaign("sf", task_kind="scifact")
    make_task_gold(campaign, subtask="claims", gold=SCIFACT_CLAIMS, codes=())
    with pytest.raises(InputError, match=r"no prediction for 1 gold claim \(5\)"):
        make_submission(campaign, "half", SCIFACT_PREDICTIONS.splitlines()[0], subtask="claims")


def test_a_scifact_gold_must_fit_the_submissions_already_stored():
    campaign = make_task_campaign("sf", task_kind="scifact")
    gold = make_task_gold(campaign, subtask="claims", gold=SCIFACT_CLAIMS, codes=())
    make_submission(campaign, "team-a", SCIFACT_PREDICTIONS, subtask="claims")
    with pytest.raises(InputError) as error:
        make_task_gold(campaign, subtask="claims", gold=SCIFACT_CLAIMS.splitlines()[0], codes=())
    assert str(error.value) == (
        "team-a.txt (stored submission team-a):2: claim 5 is not one of the gold claims"
    )
    assert list(TaskGold.objects.all()) == [gold]
    assert gold.file.read() == SCIFACT_CLAIMS


def test_deleting_a_submission_removes_its_file():
    campaign = make_task_campaign()
    make_task_gold(campaign)
    submission = make_submission(campaign, "team-a", CODIESP_RUN)
    services.task_submission_delete(submission=submission)
    assert not TaskSubmission.objects.exists()
    assert "tasks/codiesp/D/team-a.txt" not in stored_files()


def test_a_submission_is_replaced_in_one_step_keeping_its_id_and_name():
    campaign = make_task_campaign()
    make_task_gold(campaign)
    submission = make_submission(campaign, "team-a", CODIESP_RUN)
    old_file = submission.file.name
    new_data = b"a\tx1\nb\tx9\n"
    replaced = services.task_submission_replace(
        submission=submission,
        upload=services.TaskUpload("fixed.tsv", new_data),
        uploaded_by=make_user("olga"),
    )
    assert (replaced.pk, replaced.name, replaced.subtask) == (submission.pk, "team-a", "D")
    assert (replaced.original_name, replaced.document_count) == ("fixed.tsv", 2)
    assert replaced.sha256 == services.TaskUpload("x", new_data).sha256()
    assert replaced.uploaded_by.username == "olga"
    assert replaced.uploaded_at >= submission.uploaded_at
    assert Path(replaced.file.path).read_bytes() == new_data
    assert old_file not in stored_files()  # the old file went once the new one was stored
    assert TaskSubmission.objects.count() == 1


def test_a_refused_replacement_changes_nothing():
    campaign = make_task_campaign()
    make_task_gold(campaign)
    submission = make_submission(campaign, "team-a", CODIESP_RUN)
    before = stored_files()
    with pytest.raises(InputError, match=r"^bad.tsv:2: expected 2 tab-separated columns"):
        services.task_submission_replace(
            submission=submission, upload=services.TaskUpload("bad.tsv", b"a\tx1\nb x2\n")
        )
    kept = TaskSubmission.objects.get()
    assert (kept.sha256, kept.original_name, kept.file.name) == (
        submission.sha256,
        submission.original_name,
        submission.file.name,
    )
    assert Path(kept.file.path).read_bytes() == CODIESP_RUN
    assert stored_files() == before
