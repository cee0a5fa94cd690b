"""The pool's Machine assessors page: organisers only; add, edit, run, prompt."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging import machine_services
from judging.models import MachineAssessor
from tests.judging.chat_server import ChatServer
from tests.judging.machine_helpers import make_machine_pool
from workbench.models import Job

pytestmark = pytest.mark.django_db


def test_assessors_and_participants_cannot_open_it(assessor_client, participant_client):
    _, pool = make_machine_pool(docs=1)
    url = reverse("judging:pool_machines", args=[pool.pk])
    assert assessor_client.get(url).status_code in (403, 404)
    assert participant_client.get(url).status_code in (403, 404)


def test_an_organiser_adds_a_machine_runs_it_and_sees_the_results(
    organiser_client, django_capture_on_commit_callbacks
):
    _campaign, pool = make_machine_pool(docs=2)
    url = reverse("judging:pool_machines", args=[pool.pk])
    page = organiser_client.get(url)
    assert page.status_code == 200
    assert "No machine yet" in page.content.decode()
    with ChatServer() as server:
        saved = organiser_client.post(
            url,
            {
                "name": "llm",
                "kind": "chat",
                "base_url": server.url,
                "model": "m",
                "api_key_env": "",
                "temperature": "0",
                "samples": "1",
                "concurrency": "2",
            },
        )
        assert saved.status_code == 302
        machine = MachineAssessor.objects.get()
        with django_capture_on_commit_callbacks(execute=True):
            started = organiser_client.post(
                url,
                {"action": "run", "machine": machine.pk, "topics": "301", "documents": "unjudged"},
            )
        assert started.status_code == 302
    assert Job.objects.get().state == Job.DONE
    text = organiser_client.get(url).content.decode()
    assert "llm" in text
    assert ">machine<" in text
    assert "judged 2, cached 0, failed 0" in text
    assert "Machine spend on this pool: 2 requests" in text


def test_bad_settings_are_a_400_with_the_reason_and_the_key_is_never_asked(organiser_client):
    _campaign, pool = make_machine_pool(docs=1)
    url = reverse("judging:pool_machines", args=[pool.pk])
    response = organiser_client.post(
        url,
        {
            "name": "x",
            "kind": "chat",
            "base_url": "nope",
            "model": "m",
            "temperature": "0",
            "samples": "1",
            "concurrency": "1",
            "prompt_override": "{secret}",
        },
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert "must be an http:// or https:// URL" in text
    assert "unknown placeholder {secret}" in text
    assert 'name="api_key"' not in text


def test_the_baseline_is_marked_and_the_prompt_is_shown(organiser_client):
    campaign, pool = make_machine_pool(docs=1)
    baseline = machine_services.machine_baseline(campaign=campaign)
    other = machine_services.machine_create(
        campaign=campaign,
        name="o",
        base_url="http://h/v1",
        model="m",
        prompt_override="Q: {query}\nD: {document}",
    )
    url = reverse("judging:pool_machines", args=[pool.pk])
    text = organiser_client.get(f"{url}?prompt={other.pk}").content.decode()
    assert ">baseline<" in text
    assert "Default template" in text
    assert "Q: {query}" in text
    assert baseline.name in text
    bad_run = organiser_client.post(
        url, {"action": "run", "machine": baseline.pk, "topics": "999", "documents": "all"}
    )
    assert bad_run.status_code == 400
    assert "unknown topics: 999" in bad_run.content.decode()


def test_the_dashboard_shows_machine_spend_beside_the_human_budget(organiser_client):
    campaign, pool = make_machine_pool(docs=2)
    campaign.judgment_budget = 10
    campaign.save()
    with ChatServer() as server:
        machine = machine_services.machine_create(
            campaign=campaign,
            name="llm",
            base_url=server.url,
            model="m",
            price_per_1k_tokens="1",
        )
        machine_services.machine_judge_run(machine=machine, pool=pool)
    text = organiser_client.get(reverse("judging:campaign_dashboard", args=[campaign.slug]))
    text = text.content.decode()
    assert "4 labels, 4 requests" in text
    assert "tokens 400 in / 20 out, cost 0.4200" in text
    assert 'data-stat="spent">0<' in text


def test_labels_made_without_this_pages_job_say_when_they_were_made(organiser_client):
    campaign, pool = make_machine_pool(docs=2)
    baseline = machine_services.machine_baseline(campaign=campaign)
    url = reverse("judging:pool_machines", args=[pool.pk])
    assert "data-last-labelled" not in organiser_client.get(url).content.decode()
    machine_services.machine_judge_run(machine=baseline, pool=pool)  # as the command does
    text = organiser_client.get(url).content.decode()
    assert "data-last-labelled" in text
    assert "by the command or the demo" in text
