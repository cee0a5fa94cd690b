"""`truthy`: the one reading of a yes/no sent as text."""

from __future__ import annotations

import pytest

from workbench.core.flags import truthy


@pytest.mark.parametrize("value", ["1", "true", "True", "YES", "on", " on ", True])
def test_the_yes_words_in_any_case_are_yes(value):
    assert truthy(value)


@pytest.mark.parametrize("value", [None, "", "0", "false", "no", "off", "y", "2", False])
def test_anything_else_is_no(value):
    assert not truthy(value)
