"""Nothing is loaded from another host: every page works offline."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.urls import reverse

from judging import services as judging_services
from tests.helpers import (
    CODIESP_RUN,
    make_campaign,
    make_documents,
    make_pool,
    make_run,
    make_submission,
    make_task_campaign,
    make_task_gold,
)

pytestmark = pytest.mark.django_db

# The attributes a browser fetches by itself when it renders the page.
_FETCHED = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "embed": ("src",),
    "object": ("data",),
}
_CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""")


class _LoadedUrls(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if not value:
                continue
            if name in _FETCHED.get(tag, ()):
                # srcset lists "url width" pairs separated by commas.
                parts = value.split(",") if name == "srcset" else [value]
                self.urls += [part.split()[0] for part in parts if part.strip()]
            elif name == "style":
                self._add_css(value)
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self._add_css(data)

    def _add_css(self, css: str) -> None:
        self.urls += [a or b for a, b in _CSS_URL.findall(css)]


def loaded_urls(html: str) -> list[str]:
    """Every URL the browser fetches to render this page: scripts, styles, fonts, images."""
    parser = _LoadedUrls()
    parser.feed(html)
    return parser.urls


def is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.netloc) or parts.scheme not in ("", "data")


def assert_all_local(html: str, where: str) -> list[str]:
    urls = loaded_urls(html)
    external = [url for url in urls if is_external(url)]
    assert not external, f"{where} loads {external} from another host"
    return urls


def test_the_checker_finds_external_urls():
    page = (
        '<link rel="stylesheet" href="https://cdn.example/x.css">'
        '<script src="//cdn.example/x.js"></script><img srcset="/a.png 1x, http://x/b.png 2x">'
        "<style>@font-face { src: url('https://fonts.example/f.woff2') }</style>"
        '<div style="background: url(/static/ok.png)"></div><link rel="icon" href="data:,">'
        '<a href="https://example.org/">a link is not loaded</a>'
    )
    assert [u for u in loaded_urls(page) if is_external(u)] == [
        "https://cdn.example/x.css",
        "//cdn.example/x.js",
        "http://x/b.png",
        "https://fonts.example/f.woff2",
    ]
    assert "/static/ok.png" in loaded_urls(page)


def test_api_docs_load_swagger_ui_from_our_static_files(assessor_client):
    response = assessor_client.get(reverse("api-docs"))
    assert response.status_code == 200
    urls = assert_all_local(response.content.decode(), "/api/docs/")
    static = [url for url in urls if url.startswith(settings.STATIC_URL)]
    assert any(url.endswith("swagger-ui-bundle.js") for url in static)
    assert any(url.endswith("swagger-ui.css") for url in static)
    for url in static:
        assert finders.find(url.removeprefix(settings.STATIC_URL)), f"{url} is not served"


def test_api_docs_show_no_validator_badge(assessor_client):
    # Swagger UI's validator badge is an image from validator.swagger.io.
    page = assessor_client.get(reverse("api-docs")).content.decode()
    assert '"validatorUrl": null' in page


@pytest.fixture
def site(assessor, assessor2):
    """A campaign with a pool, an assignment and two disagreeing judgments."""
    campaign = make_campaign(topics=("301",))
    make_documents(campaign, ["d1", "d2"])
    make_run(campaign, "bm25", {"301": ["d1", "d2"]})
    pool = make_pool(campaign, {"301": ["d1", "d2"]})
    topic = campaign.topics.get()
    assignment = judging_services.assignments_create(
        pool=pool, topics=[topic], assessors=[assessor]
    )[0]
    for user, relevance in ((assessor, 0), (assessor2, 1)):
        judging_services.judgment_record(
            assessor=user,
            topic=topic,
            docno="d1",
            relevance=relevance,
            aspects={"effectiveness": 3, "credibility": 1} if relevance else {},
        )
    task = make_task_campaign()
    make_task_gold(task)
    submission = make_submission(task, "team-a", CODIESP_RUN)
    return {
        "campaign": campaign,
        "pool": pool,
        "topic": topic,
        "assignment": assignment,
        "task": task,
        "submission": submission,
    }


def organiser_pages(site) -> list[str]:
    slug, pool, topic = site["campaign"].slug, site["pool"].pk, site["topic"].pk
    task, submission = site["task"].slug, site["submission"].pk
    return [
        reverse("pooling:campaign_list"),
        reverse("pooling:campaign_create"),
        reverse("pooling:campaign_detail", args=[slug]),
        reverse("pooling:campaign_edit", args=[slug]),
        reverse("pooling:pool_new", args=[slug]),
        reverse("pooling:pool_detail", args=[slug, pool]),
        reverse("judging:pool_assignments", args=[pool]),
        reverse("judging:pool_overlap", args=[pool]),
        reverse("judging:pool_agreement", args=[pool]),
        reverse("judging:pool_adjudication", args=[pool]),
        reverse("judging:adjudicate", args=[pool, topic, "d1"]),
        reverse("judging:document_history", args=[topic, "d1"]),
        reverse("scoring:pool_scores", args=[pool]),
        reverse("scoring:pool_qrels", args=[pool]),
        reverse("scoring:task_campaign", args=[task]),
        reverse("scoring:task_scores", args=[task, "D"]),
        reverse("scoring:task_submission", args=[task, submission]),
        reverse("admin:index"),
        reverse("admin:pooling_campaign_changelist"),
        reverse("api-docs"),
        reverse("api_tokens"),
    ]


def assessor_pages(site) -> list[str]:
    assignment = site["assignment"].pk
    return [
        reverse("judging:assessor_home"),
        reverse("judging:judge", args=[assignment, 1]),
        reverse("judging:judged_list", args=[assignment]),
        reverse("api_tokens"),
    ]


def test_no_page_loads_anything_from_another_host(client, organiser, assessor, site):
    pages = [(None, reverse("login"))]
    pages += [(organiser, url) for url in organiser_pages(site)]
    pages += [(assessor, url) for url in assessor_pages(site)]
    for user, url in pages:
        if user is None:
            client.logout()
        else:
            client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200, f"{url} answered {response.status_code}"
        assert response["Content-Type"].startswith("text/html")
        assert_all_local(response.content.decode(), url)
