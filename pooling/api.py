"""Machine clients of a campaign: create and change it, upload and read its topics
and documents (its runs: `pooling.run_api`; the serializers: `pooling.serializers`).

The same forms and services as the pages: a rejected file answers 400 with
every problem as `file`, `line`, `reason`, and nothing is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.filters import OrderingFilter
from rest_framework.generics import ListAPIView, RetrieveAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling import services
from pooling.core.document_files import DOCUMENT_FORMATS
from pooling.core.topic_files import TOPIC_FORMATS
from pooling.forms import (
    CUSTOM_SCHEMA,
    AnswerUploadForm,
    CampaignEditForm,
    CampaignForm,
    DocumentUploadForm,
    TopicUploadForm,
)
from pooling.models import Campaign, Document, Topic
from pooling.serializers import (
    AnswersSetSerializer,
    CampaignDetailSerializer,
    CampaignInputSerializer,
    CampaignSerializer,
    CampaignTopicSerializer,
    CampaignUpdateSerializer,
    DocumentDetailSerializer,
    DocumentSerializer,
    ImportedSerializer,
    RejectedSerializer,
)
from workbench import uploads
from workbench.api import DetailSerializer, OptionalPagination, Pagination, form_errors
from workbench.job_api import job_accepted_response
from workbench.models import Job
from workbench.roles import IsOrganiser

ORGANISERS = [IsAuthenticated, IsOrganiser]


# --------------------------------------------------------------------------
# Campaigns


def _campaign_form_data(values: dict[str, Any]) -> dict[str, Any]:
    """The API's fields as the campaign form's: a schema object is a custom schema."""
    data = dict(values)
    schema = data.pop("label_schema", None)
    if schema is None:
        return data
    if isinstance(schema, str):
        data["label_schema"] = schema
    else:
        data["label_schema"], data["custom_schema"] = CUSTOM_SCHEMA, json.dumps(schema)
    return data


def _campaign_detail(campaign: Campaign) -> Campaign:
    return Campaign.objects.annotate(
        n_topics=Count("topics", distinct=True),
        n_documents=Count("documents", distinct=True),
        n_runs=Count("runs", distinct=True),
        n_pools=Count("pools", distinct=True),
    ).get(pk=campaign.pk)


def _saved(form: CampaignForm, save: Callable[..., Campaign]) -> Campaign:
    """Save through the campaign service; the form's or the service's refusal is a 400."""
    if not form.is_valid():
        raise form_errors(form)
    try:
        return save(**form.campaign_data())
    except DjangoValidationError as error:
        form.add_error(None, error)
        raise form_errors(form) from None


class CampaignListView(ListAPIView):
    """GET lists the campaigns, newest first; POST creates one."""

    permission_classes = ORGANISERS
    serializer_class = CampaignSerializer
    pagination_class = OptionalPagination
    queryset = Campaign.objects.all()
    filter_backends = [OrderingFilter]
    ordering_fields = ["created_at", "name", "slug"]

    @extend_schema(
        request=CampaignInputSerializer,
        responses={201: CampaignDetailSerializer, 400: OpenApiResponse(description="Refused.")},
    )
    def post(self, request: Request) -> Response:
        payload = CampaignInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        form = CampaignForm(_campaign_form_data(payload.validated_data))
        campaign = _saved(
            form, lambda **fields: services.campaign_create(created_by=request.user, **fields)
        )
        return Response(
            CampaignDetailSerializer(_campaign_detail(campaign)).data,
            status=status.HTTP_201_CREATED,
        )


class CampaignView(APIView):
    """GET: a campaign with its label schema, budget and counts; PATCH changes it."""

    permission_classes = ORGANISERS

    @extend_schema(responses=CampaignDetailSerializer)
    def get(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        return Response(CampaignDetailSerializer(_campaign_detail(campaign)).data)

    @extend_schema(
        request=CampaignUpdateSerializer,
        responses={
            200: CampaignDetailSerializer,
            400: OpenApiResponse(
                description="Refused, e.g. a new label schema once judgments are stored."
            ),
        },
    )
    def patch(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        payload = CampaignUpdateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = CampaignEditForm.initial_for(campaign) | _campaign_form_data(payload.validated_data)
        campaign = _saved(
            CampaignEditForm(data),
            lambda **fields: services.campaign_update(campaign=campaign, **fields),
        )
        return Response(CampaignDetailSerializer(_campaign_detail(campaign)).data)


# --------------------------------------------------------------------------
# Files of a campaign: topics, answers, documents


def upload_request(name: str, formats: tuple[str, ...] = ()) -> dict[str, Any]:
    fields: dict[str, serializers.Field] = {"file": serializers.FileField()}
    if formats:
        fields["format"] = serializers.ChoiceField(
            choices=formats, required=False, help_text="Default: detected from the file."
        )
    return {"multipart/form-data": inline_serializer(name, fields)}


def upload_responses(stored: Any) -> dict[int, Any]:
    return {
        201: stored,
        400: OpenApiResponse(RejectedSerializer, description="Rejected; nothing stored."),
        413: OpenApiResponse(DetailSerializer, description="A file over the upload limit."),
    }


def file_upload(
    request: Request,
    slug: str,
    form_class: type[forms.Form],
    store: Callable[[Campaign, dict[str, Any]], dict[str, Any] | Job],
) -> Response:
    """Check the upload with the page's form, store it with the page's service, and
    answer as every upload does (`uploads.upload_receive`)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    form = form_class(request.data, request.FILES)
    received = uploads.upload_receive(request, form, lambda data: store(campaign, data))
    return uploads.upload_answer(request, received, lambda body: body)


def _store_topics(campaign: Campaign, data: dict[str, Any]) -> dict[str, Any]:
    upload = data["file"]
    result = services.topics_import(
        campaign=campaign, data=upload.read(), name=upload.name, format=data["format"] or None
    )
    detail = f"Topics from {upload.name}: {result}."
    return {"detail": detail, "created": result.created, "updated": result.updated}


def _store_answers(campaign: Campaign, data: dict[str, Any]) -> dict[str, Any]:
    upload = data["file"]
    result = services.topic_answers_import(campaign=campaign, data=upload.read(), name=upload.name)
    detail = f"Accepted answers from {upload.name}: {result}."
    return {"detail": detail, "set": result.set, "changed": result.changed}


def _store_documents(campaign: Campaign, data: dict[str, Any], user: Any) -> dict[str, Any] | Job:
    upload = data["file"]
    result = services.documents_upload(
        campaign=campaign, file=upload, format=data["format"] or None, uploaded_by=user
    )
    if isinstance(result, Job):
        return result
    detail = f"Documents from {upload.name}: {result}."
    return {"detail": detail, "created": result.created, "updated": result.updated}


class CampaignTopicsView(ListAPIView):
    """GET lists a campaign's topics in their file order; POST uploads a topic file
    (field `file`; topics it already has are updated)."""

    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]
    serializer_class = CampaignTopicSerializer
    pagination_class = Pagination
    filter_backends = [OrderingFilter]
    ordering_fields = ["position", "topic_id"]
    ordering = ["position"]

    def get_queryset(self) -> Any:
        campaign = get_object_or_404(Campaign, slug=self.kwargs["slug"])
        return campaign.topics.all()

    @extend_schema(
        request=upload_request("TopicUpload", TOPIC_FORMATS),
        responses=upload_responses(ImportedSerializer),
    )
    def post(self, request: Request, slug: str) -> Response:
        return file_upload(request, slug, TopicUploadForm, _store_topics)


class TopicView(RetrieveAPIView):
    permission_classes = ORGANISERS
    serializer_class = CampaignTopicSerializer

    def get_object(self) -> Topic:
        return get_object_or_404(
            Topic, campaign__slug=self.kwargs["slug"], topic_id=self.kwargs["topic_id"]
        )


class CampaignAnswersView(APIView):
    """Each topic's accepted answer from a `topics_efficacy` file (`topic answer`)."""

    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]

    @extend_schema(
        request=upload_request("AnswersUpload"),
        responses=upload_responses(AnswersSetSerializer),
    )
    def post(self, request: Request, slug: str) -> Response:
        return file_upload(request, slug, AnswerUploadForm, _store_answers)


class CampaignDocumentsView(ListAPIView):
    """GET lists a campaign's documents by docno (without their text); POST uploads a
    collection file (field `file`; documents it already has are updated)."""

    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]
    serializer_class = DocumentSerializer
    pagination_class = Pagination
    filter_backends = [OrderingFilter]
    ordering_fields = ["docno"]
    ordering = ["docno"]

    def get_queryset(self) -> Any:
        campaign = get_object_or_404(Campaign, slug=self.kwargs["slug"])
        return campaign.documents.only("docno", "title", "url")

    @extend_schema(
        request=upload_request("DocumentUpload", DOCUMENT_FORMATS),
        responses=upload_responses(ImportedSerializer)
        | {
            202: job_accepted_response(
                "A file larger than WORKBENCH_UPLOAD_JOB_BYTES: a background job stores "
                "it; its state at `url` says done (with the counts) or failed (with every "
                "problem, nothing stored)."
            )
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        def store(campaign: Campaign, data: dict[str, Any]) -> dict[str, Any] | Job:
            return _store_documents(campaign, data, request.user)

        return file_upload(request, slug, DocumentUploadForm, store)


class DocumentView(RetrieveAPIView):
    """One document with its text."""

    permission_classes = ORGANISERS
    serializer_class = DocumentDetailSerializer

    def get_object(self) -> Document:
        return get_object_or_404(
            Document, campaign__slug=self.kwargs["slug"], docno=self.kwargs["docno"]
        )
