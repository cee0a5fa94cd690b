"""Your own API token over the API: see whether you have one, make a new one (the
old one stops working at once), or revoke it. Organisers manage assessors'
tokens on the tokens page."""

from __future__ import annotations

from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from workbench import services


class TokenStateSerializer(serializers.Serializer):
    username = serializers.CharField()
    has_token = serializers.BooleanField()
    created = serializers.DateTimeField(allow_null=True)


class NewTokenSerializer(serializers.Serializer):
    username = serializers.CharField()
    key = serializers.CharField(
        help_text="Shown this once: send it as `Authorization: Token <key>`."
    )
    created = serializers.DateTimeField()


@method_decorator(never_cache, name="dispatch")  # an answer may hold the key
class OwnTokenView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=TokenStateSerializer)
    def get(self, request: Request) -> Response:
        """Whether you have a token, and since when (never its key)."""
        token = Token.objects.filter(user=request.user).first()
        return Response(
            {
                "username": request.user.username,
                "has_token": token is not None,
                "created": token.created if token else None,
            }
        )

    @extend_schema(request=None, responses={201: NewTokenSerializer})
    def post(self, request: Request) -> Response:
        """A new token for you; the one you had (perhaps the one sending this) stops
        working at once."""
        token = services.token_create(user=request.user)
        return Response(
            {"username": request.user.username, "key": token.key, "created": token.created},
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(responses={204: OpenApiResponse(description="Revoked (or there was none).")})
    def delete(self, request: Request) -> Response:
        """Revoke your token: calls with it get 401 from now on."""
        services.token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
