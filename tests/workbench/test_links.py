"""Only http and https URLs from uploaded data become links."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.urls import reverse

from judging import services
from pooling.models import Document
from tests.helpers import make_campaign, make_documents, make_pool
from workbench.templatetags.links import safe_link


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "\x00javascript:alert(1)",
        "\x01\x1f javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "jav&#x09;ascript:alert(1)",
        "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        "DATA:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "ftp://example.org/doc",
        "//evil.example/x",
        "/relative/path",
        "relative/path",
        "?q=1",
        "#top",
        "http:",
        "https://",
        "http:/example.org",
        "",
        "   ",
    ],
)
def test_anything_but_an_absolute_http_url_is_no_link(url):
    assert safe_link(url) == ""


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("http://example.org/doc?id=1", "http://example.org/doc?id=1"),
        ("https://example.org/a b", "https://example.org/a b"),
        ("HTTPS://Example.org/", "HTTPS://Example.org/"),
        ("  https://example.org/doc\n", "https://example.org/doc"),
        ("\x00https://example.org/", "https://example.org/"),
    ],
)
def test_http_and_https_urls_are_links(url, link):
    assert safe_link(url) == link


def test_none_is_no_link():
    assert safe_link(None) == ""


def test_the_filter_is_there_for_templates():
    template = Template("{% load links %}[{{ url|safe_link }}]")
    assert template.render(Context({"url": "javascript:alert(1)"})) == "[]"
    assert (
        template.render(Context({"url": "https://x.org/?a=1&b=2"}))
        == "[https://x.org/?a=1&amp;b=2]"
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "source_link"),
    [
        ("javascript:alert(document.cookie)", None),
        ("data:text/html,<script>alert(1)</script>", None),
        ("https://example.org/d1", 'href="https://example.org/d1"'),
    ],
)
def test_the_judging_page_links_only_web_sources(assessor_client, assessor, url, source_link):
    campaign = make_campaign(topics=("301",))
    make_documents(campaign, ["d1"])
    Document.objects.filter(docno="d1").update(url=url)
    pool = make_pool(campaign, {"301": ["d1"]})
    assignment = services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    )[0]
    page = assessor_client.get(reverse("judging:judge", args=[assignment.pk, 1])).content.decode()
    assert "Text of d1." in page
    if source_link is None:
        assert ">source</a>" not in page
        assert "javascript:" not in page
        assert "data:text" not in page
    else:
        assert source_link in page
        assert ">source</a>" in page
