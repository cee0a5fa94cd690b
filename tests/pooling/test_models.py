"""Campaign helpers on the model."""

from __future__ import annotations

import pytest

from tests.helpers import make_campaign
from workbench.core.label_schema import SCHEMA_PRESETS

pytestmark = pytest.mark.django_db


def test_a_campaign_knows_its_schema_preset():
    assert make_campaign("a").schema_preset == SCHEMA_PRESETS["decision"]
    graded = make_campaign("b", label_schema=SCHEMA_PRESETS["graded-0-3"].schema())
    assert graded.schema_preset == SCHEMA_PRESETS["graded-0-3"]
    own = SCHEMA_PRESETS["binary"].schema()
    own["relevance"]["grades"][1]["key"] = "r"
    assert make_campaign("c", label_schema=own).schema_preset is None
