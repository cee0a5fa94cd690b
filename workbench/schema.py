"""The OpenAPI schema's view (apart from workbench.api: DRF's settings import that,
and drf-spectacular's views import DRF's settings)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.views import SpectacularAPIView
from rest_framework.renderers import JSONRenderer


class SchemaView(SpectacularAPIView):
    """The OpenAPI schema (YAML or JSON); its refusals (401 without credentials) in
    JSON, as every answer of the API, not in the schema's YAML."""

    def handle_exception(self, exc: Exception) -> Any:
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response
