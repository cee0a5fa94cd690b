"""The leak check of the assessor and participant tests: random tokens are not leaks."""

from __future__ import annotations

import pytest

from tests.helpers import assert_nothing_leaks, assert_nothing_leaks_to_participants

PAGE = (
    '<script nonce="Ud9x">x</script><body hx-headers=\'{"X-CSRFToken": "kd9Q"}\'>'
    '<input type="hidden" name="csrfmiddlewaretoken" value="docx-d9">'
)
# The same page as a browser serialises it (Playwright's page.content()).
SERIALISED = '<body hx-headers="{&quot;X-CSRFToken&quot;: &quot;d9docx-Q&quot;}">'


def test_a_marker_inside_the_nonce_or_csrf_token_is_chance_not_a_leak():
    assert_nothing_leaks(PAGE + "<p>your documents</p>")
    assert_nothing_leaks_to_participants(PAGE + "<p>your runs</p>")


def test_a_marker_inside_the_token_as_a_browser_serialises_it_is_chance_too():
    assert_nothing_leaks(SERIALISED + "<p>your documents</p>")
    assert_nothing_leaks_to_participants(SERIALISED + "<p>your runs</p>")


def test_a_marker_in_the_page_itself_is_still_caught():
    with pytest.raises(AssertionError, match="'d9' is shown to an assessor"):
        assert_nothing_leaks(PAGE + "<td>d9</td>")
    with pytest.raises(AssertionError, match="'docx-' is shown to a participant"):
        assert_nothing_leaks_to_participants(PAGE + "<td>docx-1</td>")
