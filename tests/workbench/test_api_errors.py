"""Whatever goes wrong, the API answers JSON, and hostile bodies are a 4xx."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import services
from judging.models import Judgment
from tests.helpers import make_campaign, make_pool

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_and_assignment(assessor):
    campaign = make_campaign(topics=("1",))
    pool = make_pool(campaign, {"1": ["d1"]})
    [assignment] = services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=assessor).key}")
    return client, assignment


def test_a_body_nested_too_deeply_is_a_400(api_and_assignment):
    client, assignment = api_and_assignment
    body = '{"relevance": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = client.put(
        f"/api/assignments/{assignment.pk}/judgments/d1/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON parse error - nested too deeply"}
    assert not Judgment.objects.exists()


def test_an_integer_too_long_to_convert_is_a_400(api_and_assignment):
    client, assignment = api_and_assignment
    body = '{"relevance": ' + "1" * 5000 + "}"
    response = client.put(
        f"/api/assignments/{assignment.pk}/judgments/d1/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]


def test_a_database_that_cannot_answer_is_a_503_in_json(api_and_assignment, monkeypatch):
    client, assignment = api_and_assignment

    def locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(services, "judgment_submit", locked)
    response = client.put(
        f"/api/assignments/{assignment.pk}/judgments/d1/",
        {"relevance": 0},
        format="json",
    )
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == {"detail": "The database could not answer; try again in a moment."}


def test_an_unexpected_api_error_is_a_500_in_json(api_and_assignment, monkeypatch):
    client, assignment = api_and_assignment
    client.raise_request_exception = False

    def broken(**kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(services, "judgment_submit", broken)
    response = client.put(
        f"/api/assignments/{assignment.pk}/judgments/d1/", {"relevance": 0}, format="json"
    )
    assert response.status_code == 500
    assert response.json() == {"detail": "Server error."}
    assert response["Content-Type"] == "application/json"


def test_a_line_break_in_a_download_name_is_replaced_and_a_nul_refused(organiser_client):
    from pooling import pool_services
    from pooling.core.spec import PoolSpec
    from tests.helpers import make_run

    campaign = make_campaign()
    make_run(campaign, "r", {"301": ["d1"]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    url = f"/campaigns/{campaign.slug}/pools/{pool.pk}/export/order/"
    assert organiser_client.get(url, {"topic": "30\x001"}).status_code == 400
    response = organiser_client.get(url, {"topic": "30\t1\r\n"})
    assert response.status_code == 200
    disposition = response["Content-Disposition"]
    assert "\r" not in disposition
    assert disposition.startswith("attachment; filename=")


def test_an_address_no_route_matches_is_a_404_in_json(organiser_client):
    response = organiser_client.get("/api/pools/-1/")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}
    assert organiser_client.get("/campaigns/-/x/").status_code == 404  # pages keep theirs


def test_the_first_lists_page_only_when_asked(organiser_client):
    """Campaigns, a pool's judgments and an assessor's assignments answered plain
    arrays before lists were paged: they still do, and page with ?limit=."""
    from tests.helpers import make_campaign

    for slug in ("a", "b", "c"):
        make_campaign(slug)
    plain = organiser_client.get("/api/campaigns/").json()
    assert [c["slug"] for c in plain] == ["c", "b", "a"]
    paged = organiser_client.get("/api/campaigns/", {"limit": 2, "offset": 1}).json()
    assert paged["count"] == 3
    assert [c["slug"] for c in paged["results"]] == ["b", "a"]
    schema = organiser_client.get("/api/schema/", headers={"Accept": "application/json"}).json()
    answer = schema["paths"]["/api/campaigns/"]["get"]["responses"]["200"]["content"]
    name = answer["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    either = schema["components"]["schemas"][name]["oneOf"]
    assert [kind.get("type") for kind in either] == ["array", "object"]


def test_too_many_files_in_one_request_is_a_400_in_json(organiser_client, settings):
    campaign = make_campaign()
    files = {
        f"file{n}": (f"r{n}.txt", b"x") for n in range(settings.DATA_UPLOAD_MAX_NUMBER_FILES + 1)
    }
    from django.test.client import encode_multipart

    body = encode_multipart("BoUnDaRy", {name: _upload(*file) for name, file in files.items()})
    response = organiser_client.post(
        f"/api/campaigns/{campaign.slug}/runs/",
        body,
        content_type="multipart/form-data; boundary=BoUnDaRy",
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "detail" in response.json()


def test_a_file_name_of_5000_characters_answers_json(organiser_client):
    campaign = make_campaign()
    response = organiser_client.post(
        f"/api/campaigns/{campaign.slug}/runs/", {"file": _upload("r" * 5000 + ".txt", b"x")}
    )
    assert 400 <= response.status_code < 500
    assert response["Content-Type"] == "application/json"


def test_the_schema_answers_an_anonymous_client_401_in_json(client):
    response = client.get("/api/schema/")
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/json")
    assert "detail" in response.json()


def _upload(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data)
