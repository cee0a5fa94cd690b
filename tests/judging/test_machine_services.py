"""Machine assessors: configuring, running against a real loopback endpoint,
caching, resuming, cancelling, failing before anything is stored."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from judging import machine_services as ms
from judging import services
from judging.machine_client import EndpointError, EndpointUnreachable
from judging.machine_selectors import machine_labels_frame, machine_spend
from judging.models import Judgment, MachineJudgment, MachineSample
from judging.selectors import judgments_frame
from tests.judging.chat_server import ChatServer, Reply, document_of
from tests.judging.machine_helpers import (
    fast,
    make_chat_machine,
    make_machine_pool,
)

pytestmark = pytest.mark.django_db
GOOD = '{"relevance": 2, "effectiveness": 3, "credibility": 1}'


def test_a_machine_account_cannot_log_in_nor_be_assigned(client):
    campaign, pool = make_machine_pool()
    machine = make_chat_machine(campaign, "http://127.0.0.1:9/v1")
    account = machine.account
    assert not account.is_active
    assert not account.has_usable_password()
    response = client.post(reverse("login"), {"username": account.username, "password": ""})
    assert "_auth_user_id" not in client.session
    assert response.status_code == 200
    with pytest.raises(services.AssignmentError, match="machine assessor is never given"):
        services.assignments_create(
            pool=pool, topics=campaign.topics.all()[:1], assessors=[account]
        )


def test_bad_settings_are_refused_with_every_reason():
    campaign, _ = make_machine_pool()
    with pytest.raises(ms.MachineError) as error:
        ms.machine_create(
            campaign=campaign,
            name="x",
            base_url="ftp://h",
            model="",
            samples=0,
            api_key_env="sk-123 secret",
            prompt_override="{bad}",
        )
    text = str(error.value)
    for part in (
        "http:// or https://",
        "model name",
        "samples must",
        "NAME of an environment",
        "unknown placeholder {bad}",
    ):
        assert part in text
    with pytest.raises(ms.MachineError, match="must be 1-60"):
        ms.machine_create(campaign=campaign, name="has space", base_url="http://h", model="m")
    make_chat_machine(campaign, "http://h/v1")
    with pytest.raises(ms.MachineError, match="already has a machine"):
        make_chat_machine(campaign, "http://h/v1")


def test_a_run_labels_every_document_and_keeps_the_provenance():
    campaign, pool = make_machine_pool()
    with ChatServer() as server:
        machine = make_chat_machine(campaign, server.url, price_per_1k_tokens="0.5")
        result = ms.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine))
    assert (result.documents, result.judged, result.failed, result.cached) == (6, 6, 0, 0)
    assert (result.requests, result.tokens_in, result.tokens_out) == (6, 600, 30)
    assert str(result.cost) == "0.315"
    body = server.requests[0]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.0
    assert body["response_format"]["type"] == "json_schema"
    sample = MachineSample.objects.first()
    assert sample.ok
    assert sample.raw_reply == GOOD
    assert sample.endpoint_host.startswith("127.0.0.1")
    assert sample.prompt_version == result.prompt_version
    assert sample.tokens_in == 100
    assert len(sample.cache_key) == 64
    assert MachineJudgment.objects.count() == 6
    assert not Judgment.objects.exists()
    frame = machine_labels_frame(pool)
    assert list(frame.columns) == list(judgments_frame(pool).columns)
    assert set(frame["assessor"]) == {machine.account.username}
    assert frame["relevance"].tolist() == [2] * 6
    assert not frame["is_primary"].any()
    spend = machine_spend(campaign)
    assert (spend.requests, spend.tokens_in, spend.labels) == (6, 600, 6)


def test_a_second_run_sends_no_request_for_what_is_cached():
    campaign, pool = make_machine_pool()
    with ChatServer() as server:
        machine = make_chat_machine(campaign, server.url)
        ms.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine))
        again = ms.machine_judge_run(
            machine=machine, pool=pool, documents="all", endpoint=fast(machine)
        )
        other = make_chat_machine(campaign, server.url, name="same-model")
        third = ms.machine_judge_run(machine=other, pool=pool, endpoint=fast(other))
    assert len(server.requests) == 6
    assert (again.cached, again.requests, again.judged) == (6, 0, 6)
    assert (third.cached, third.requests, third.judged) == (6, 0, 6)


def test_replies_fenced_garbage_and_outside_the_schema():
    campaign, pool = make_machine_pool(docs=1)

    def by_document(body):
        text = document_of(body)
        if "301-d0" in text:
            return Reply(content=f"```json\n{GOOD}\n```")
        return Reply(content='{"relevance": 9}')

    with ChatServer(by_document) as server:
        server.queue = [Reply(content="I think it is relevant.")]  # then asked once more
        machine = make_chat_machine(campaign, server.url, concurrency=1)
        result = ms.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine))
    assert (result.judged, result.failed) == (1, 1)
    assert dict(result.reasons) == {"outside the schema": 1}
    failed = MachineSample.objects.get(ok=False)
    assert failed.raw_reply == '{"relevance": 9}'
    assert failed.labels is None
    assert failed.requests == 2
    assert not MachineJudgment.objects.filter(docno="302-d0").exists()
    assert len(server.requests) == 4  # garbage, fenced; outside twice


def test_429_with_retry_after_500_and_a_closed_connection_are_retried():
    campaign, pool = make_machine_pool(docs=1)
    with ChatServer() as server:
        server.queue = [
            Reply(status=429, headers={"Retry-After": "0.2"}, body="{}"),
            Reply(status=500, body="oops"),
            Reply(close=True),
        ]
        machine = make_chat_machine(campaign, server.url, concurrency=1)
        started = time.monotonic()
        result = ms.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine, retries=3))
    assert time.monotonic() - started >= 0.2  # Retry-After, not the 0.01 s backoff
    assert (result.judged, result.failed) == (2, 0)
    assert len(server.requests) == 5


def test_a_slow_endpoint_times_out_and_is_recorded_as_a_failure():
    campaign, pool = make_machine_pool(docs=1)
    with ChatServer(lambda body: Reply(delay=0.6)) as server:
        machine = make_chat_machine(campaign, server.url, concurrency=2)
        result = ms.machine_judge_run(
            machine=machine,
            pool=pool,
            topics=["301"],
            endpoint=fast(machine, timeout=0.2, retries=1),
        )
    assert (result.judged, result.failed) == (0, 1)
    assert dict(result.reasons) == {"timeout after 2 tries": 1}


def test_another_4xx_fails_fast_with_the_endpoints_message_and_stores_nothing():
    campaign, pool = make_machine_pool(docs=1)
    body = '{"error": {"message": "model not found"}}'
    with ChatServer(lambda b: Reply(status=404, body=body)) as server:
        machine = make_chat_machine(campaign, server.url)
        with pytest.raises(EndpointError, match="HTTP 404: model not found"):
            ms.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine))
    assert not MachineSample.objects.exists()


def test_an_unreachable_endpoint_fails_before_anything_is_stored():
    campaign, pool = make_machine_pool(docs=1)
    with ChatServer() as server:
        url = server.url
    machine = make_chat_machine(campaign, url)
    with pytest.raises(EndpointUnreachable, match="cannot reach"):
        ms.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine))
    assert not MachineSample.objects.exists()
    assert not MachineJudgment.objects.exists()


def test_a_missing_key_fails_before_anything_is_sent(monkeypatch):
    campaign, pool = make_machine_pool(docs=1)
    monkeypatch.delenv("WB_TEST_KEY", raising=False)
    with ChatServer() as server:
        machine = make_chat_machine(campaign, server.url, api_key_env="WB_TEST_KEY")
        with pytest.raises(ms.MachineError, match=r"WB_TEST_KEY .* is not set"):
            ms.machine_judge_run(machine=machine, pool=pool)
        monkeypatch.setenv("WB_TEST_KEY", "sk-test")
        ms.machine_judge_run(machine=machine, pool=pool, topics=["301"])
    assert server.headers[0]["Authorization"] == "Bearer sk-test"
    assert len(server.requests) == 1


def test_a_run_stopped_midway_keeps_its_batches_and_the_next_goes_on():
    campaign, pool = make_machine_pool(docs=3)

    class Stop(Exception):
        pass

    def progress(done=None, total=None, unit=None):
        if done == 2:
            raise Stop

    with ChatServer() as server:
        machine = make_chat_machine(campaign, server.url)
        with pytest.raises(Stop):
            ms.machine_judge_run(
                machine=machine, pool=pool, endpoint=fast(machine), batch=2, progress=progress
            )
        assert MachineJudgment.objects.count() == 2
        result = ms.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine))
    assert (result.skipped, result.documents, result.judged) == (2, 4, 4)
    assert len(server.requests) == 6


def test_samples_give_the_majority_label():
    campaign, pool = make_machine_pool(docs=1)
    replies = iter(['{"relevance": 0}', GOOD, '{"relevance": 0}'])
    with ChatServer(lambda body: Reply(content=next(replies))) as server:
        machine = make_chat_machine(campaign, server.url, samples=3, concurrency=1, temperature=0.7)
        ms.machine_judge_run(machine=machine, pool=pool, topics=["301"], endpoint=fast(machine))
    label = MachineJudgment.objects.get()
    assert label.labels == {"relevance": 0, "effectiveness": -1, "credibility": -1}
    assert sorted(MachineSample.objects.values_list("sample", flat=True)) == [0, 1, 2]


def test_the_lexical_baseline_labels_relevance_only_without_a_network():
    campaign, pool = make_machine_pool(docs=3)
    machine = ms.machine_baseline(campaign=campaign)
    assert machine.name == "baseline"
    assert machine.is_baseline
    result = ms.machine_judge_run(machine=machine, pool=pool)
    assert (result.judged, result.requests) == (6, 0)
    labels = MachineJudgment.objects.filter(machine=machine).values_list("labels", flat=True)
    assert all(set(v) == {"relevance", "effectiveness", "credibility"} for v in labels)
    assert all(v["effectiveness"] == -1 for v in labels)
    assert ms.machine_baseline(campaign=campaign) == machine


def test_an_unreachable_endpoint_is_found_by_the_first_request_alone():
    campaign, pool = make_machine_pool(docs=20)
    with ChatServer() as server:
        url = server.url
    machine = make_chat_machine(campaign, url, concurrency=1)
    endpoint = fast(machine, backoff=0.05, retries=2)  # 0.15 s of waiting per request
    started = time.monotonic()
    with pytest.raises(EndpointUnreachable):
        ms.machine_judge_run(machine=machine, pool=pool, endpoint=endpoint)
    assert time.monotonic() - started < 1.5  # not 40 requests' retries


def test_requests_per_minute_spread_the_requests():
    campaign, pool = make_machine_pool(docs=3)
    with ChatServer() as server:
        machine = make_chat_machine(campaign, server.url, concurrency=4, requests_per_minute=600)
        started = time.monotonic()
        ms.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine))
    assert len(server.requests) == 6
    assert time.monotonic() - started >= 0.5  # 6 requests, one every 0.1 s


def test_the_lexical_baseline_fits_its_cut_points_on_the_human_labels(assessor, monkeypatch):
    from judging.core import lexical

    campaign, pool = make_machine_pool(docs=3)
    [assignment] = services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    services.judgment_submit(
        assignment=assignment,
        docno="301-d0",
        relevance=2,
        aspects={"effectiveness": 3, "credibility": 1},
    )
    fitted, default = [], []
    real_fit, real_default = lexical.fit_thresholds, lexical.default_thresholds

    def fit(scores, grades, levels):
        fitted.append(list(grades))
        return real_fit(scores, grades, levels)

    def by_default(scores, levels):
        default.append(len(scores))
        return real_default(scores, levels)

    monkeypatch.setattr(lexical, "fit_thresholds", fit)
    monkeypatch.setattr(lexical, "default_thresholds", by_default)
    ms.machine_judge_run(machine=ms.machine_baseline(campaign=campaign), pool=pool)
    assert fitted == [[2]]  # topic 301: its one human label
    # topic 302: no human label, the default cut points of its 3 scores (the real
    # fit_thresholds may fall back on them too for a topic with few labels)
    assert default[-1] == 3
