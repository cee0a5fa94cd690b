"""The admin leaves the label schema and task kind to the campaign's edit page, which guards them."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.helpers import make_campaign
from workbench.core.label_schema import SCHEMA_PRESETS

pytestmark = pytest.mark.django_db


def test_the_admin_cannot_change_a_campaigns_label_schema(organiser_client):
    campaign = make_campaign()
    url = reverse("admin:pooling_campaign_change", args=[campaign.pk])
    page = organiser_client.get(url).content.decode()
    assert 'name="label_schema"' not in page
    assert 'name="task_kind"' not in page
    response = organiser_client.post(
        url,
        {
            "name": "Renamed",
            "slug": campaign.slug,
            "description": "",
            "guidelines": "",
            "judgment_budget": "",
            "label_schema": json.dumps(SCHEMA_PRESETS["binary"].data),
            "task_kind": "codiesp",
        },
    )
    assert response.status_code == 302
    campaign.refresh_from_db()
    assert campaign.name == "Renamed"
    assert campaign.label_schema == SCHEMA_PRESETS["decision"].data
    assert campaign.task_kind == "ranked"
