"""Machine clients of a campaign: create and change it, upload and read its topics,
documents and runs, delete or replace a run no pool uses.

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
from django.utils.datastructures import MultiValueDict
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
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

from pooling import run_services, selectors, services
from pooling.core.document_files import DOCUMENT_FORMATS
from pooling.core.topic_files import TOPIC_FORMATS
from pooling.errors import RunInUse
from pooling.forms import (
    CUSTOM_SCHEMA,
    AnswerUploadForm,
    CampaignEditForm,
    CampaignForm,
    DocumentUploadForm,
    RunReplaceForm,
    RunUploadForm,
    TopicUploadForm,
)
from pooling.models import Campaign, Document, Run, TaskKind, Topic
from workbench import uploads
from workbench.api import DetailSerializer, OptionalPagination, Pagination, form_errors
from workbench.core.flags import truthy
from workbench.core.label_schema import DEFAULT_PRESET, SCHEMA_PRESETS
from workbench.job_api import job_accepted_response
from workbench.models import Job
from workbench.roles import IsOrganiser

ORGANISERS = [IsAuthenticated, IsOrganiser]


class CampaignSerializer(serializers.ModelSerializer):
    class Meta:
        model = Campaign
        fields = [
            "slug",
            "name",
            "task_kind",
            "description",
            "judgment_budget",
            "label_schema",
            "created_at",
        ]


class RunSerializer(serializers.ModelSerializer):
    uploaded_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Run
        fields = [
            "id",
            "tag",
            "original_name",
            "sha256",
            "line_count",
            "topic_count",
            "depth",
            "documents_per_topic",
            "uploaded_by",
            "uploaded_at",
        ]


class ProblemSerializer(serializers.Serializer):
    file = serializers.CharField()
    line = serializers.IntegerField(help_text="1-based; 0 for the whole file.")
    reason = serializers.CharField()


class RejectedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = ProblemSerializer(many=True, help_text="The first 50 problems of each file.")
    total = serializers.IntegerField(help_text="All problems, listed or not.")


class PartlyStoredSerializer(serializers.Serializer):
    detail = serializers.CharField()
    stored = RunSerializer(many=True, help_text="The runs stored.")
    errors = ProblemSerializer(many=True, help_text="The rejected files' first 50 problems each.")
    total = serializers.IntegerField(help_text="All problems of the rejected files.")


# --------------------------------------------------------------------------
# Campaigns


class BudgetSerializer(serializers.Serializer):
    budget = serializers.IntegerField(allow_null=True, help_text="null: no budget set")
    judgments = serializers.IntegerField()
    adjudications = serializers.IntegerField()
    spent = serializers.IntegerField()
    remaining = serializers.IntegerField(
        allow_null=True, help_text="negative once overspent; null without a budget"
    )


class CampaignDetailSerializer(CampaignSerializer):
    budget = serializers.SerializerMethodField()
    topics = serializers.IntegerField(source="n_topics", read_only=True)
    documents = serializers.IntegerField(source="n_documents", read_only=True)
    runs = serializers.IntegerField(source="n_runs", read_only=True)
    pools = serializers.IntegerField(source="n_pools", read_only=True)
    schema_lock = serializers.SerializerMethodField(
        help_text="Why the label schema can no longer change; empty while it can."
    )
    task_kind_lock = serializers.SerializerMethodField(
        help_text="Why the task kind can no longer change; empty while it can."
    )

    class Meta(CampaignSerializer.Meta):
        fields = [
            *CampaignSerializer.Meta.fields,
            "guidelines",
            "budget_counts_adjudications",
            "budget",
            "topics",
            "documents",
            "runs",
            "pools",
            "schema_lock",
            "task_kind_lock",
        ]

    @extend_schema_field(BudgetSerializer)
    def get_budget(self, campaign: Campaign) -> dict[str, Any]:
        state = selectors.campaign_budget(campaign)
        return {
            "budget": state.budget,
            "judgments": state.judgments,
            "adjudications": state.adjudications,
            "spent": state.spent,
            "remaining": state.remaining,
        }

    def get_schema_lock(self, campaign: Campaign) -> str:
        return selectors.campaign_schema_lock(campaign)

    def get_task_kind_lock(self, campaign: Campaign) -> str:
        return selectors.campaign_task_kind_lock(campaign)


class CampaignInputSerializer(serializers.Serializer):
    """A campaign's fields as the campaign form takes them; the form checks them again."""

    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=100, help_text="Names its URLs and files; it stays.")
    task_kind = serializers.ChoiceField(choices=TaskKind.choices, default=TaskKind.RANKED)
    description = serializers.CharField(allow_blank=True, default="")
    guidelines = serializers.CharField(
        allow_blank=True, default="", help_text="Shown to assessors beside every topic."
    )
    judgment_budget = serializers.IntegerField(
        allow_null=True, default=None, min_value=0, max_value=2**31 - 1
    )
    budget_counts_adjudications = serializers.BooleanField(default=True)
    label_schema = serializers.JSONField(
        default=DEFAULT_PRESET,
        help_text=f"A preset ({', '.join(SCHEMA_PRESETS)}) or a schema object, "
        "checked as the page checks a custom schema.",
    )


class CampaignUpdateSerializer(CampaignInputSerializer):
    """Any of the fields; those left out keep their value. The slug cannot change."""

    slug = None  # type: ignore[assignment]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, partial=True, **kwargs)


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


class CampaignTopicSerializer(serializers.ModelSerializer):
    class Meta:
        model = Topic
        fields = ["topic_id", "title", "description", "narrative", "extra", "position"]


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["docno", "title", "url"]


class DocumentDetailSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["docno", "title", "url", "text"]


class ImportedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()


class AnswersSetSerializer(serializers.Serializer):
    detail = serializers.CharField()
    set = serializers.IntegerField()
    changed = serializers.IntegerField()


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


# --------------------------------------------------------------------------
# Runs


class CampaignRunsView(ListAPIView):
    """GET lists a campaign's runs (paged when asked: `?limit=&offset=`); POST uploads
    one or more run files (field `file`)."""

    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]
    serializer_class = RunSerializer
    pagination_class = OptionalPagination
    filter_backends = [OrderingFilter]
    ordering_fields = ["tag", "uploaded_at"]

    def get_queryset(self) -> Any:
        campaign = get_object_or_404(Campaign, slug=self.kwargs["slug"])
        return campaign.runs.select_related("uploaded_by")

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "RunUpload",
                {
                    "file": serializers.ListField(child=serializers.FileField()),
                    "keep_valid": serializers.BooleanField(required=False),
                },
            )
        },
        responses={
            201: PolymorphicProxySerializer(
                component_name="RunsStored",
                serializers=[RunSerializer(many=True), PartlyStoredSerializer],
                resource_type_field_name=None,
                # drf-spectacular's way to keep the sub-serializer's many=True.
                many=False,
            ),
            202: job_accepted_response(
                "An upload larger than WORKBENCH_UPLOAD_JOB_BYTES: a background "
                "job checks and stores it; its state at `url` says done (with the runs) "
                "or failed (with every problem, nothing stored)."
            ),
            400: OpenApiResponse(RejectedSerializer, description="Rejected; nothing stored."),
            413: OpenApiResponse(description="A file over WORKBENCH_MAX_UPLOAD_BYTES."),
        },
        description=(
            "Every line of every file is checked first. A batch with a rejected file stores "
            "nothing (400), unless `keep_valid`: then the valid files are stored and the "
            "answer is 201 with `stored` runs and the rejected files' `errors`."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        files = request.FILES.getlist("file")
        form = RunUploadForm(_run_upload_data(request), MultiValueDict({"files": files}))
        if not files and not uploads.too_large(request):
            return Response(
                {"detail": "Attach at least one run file in the multipart field 'file'."},
                status=status.HTTP_400_BAD_REQUEST,
            )

        def store(data: dict[str, Any]) -> list[Run] | Job:
            try:
                return run_services.runs_upload(
                    campaign=campaign,
                    files=data["files"],
                    uploaded_by=request.user,
                    keep_valid=data["keep_valid"],
                )
            except run_services.RunsPartlyImported as error:
                if not error.stored:
                    raise
                return error

        received = uploads.upload_receive(request, form, store)
        return uploads.upload_answer(
            request,
            received,
            _runs_stored,
            accepted="Accepted: the runs are checked and stored by a background job.",
        )


def _run_upload_data(request: Request) -> dict[str, Any]:
    """The runs form's fields from the API's: `keep_valid` yes or no as `truthy` reads it."""
    return {"keep_valid": truthy(request.data.get("keep_valid"))}


def _runs_stored(stored: list[Run] | run_services.RunsPartlyImported) -> dict[str, Any]:
    """201: the runs, or (some files rejected, `keep_valid`) those stored and why the
    others were not."""
    if isinstance(stored, run_services.RunsPartlyImported):
        tags = ", ".join(run.tag for run in stored.stored)
        return {
            "detail": f"Stored: {tags}. Some files were rejected and not stored.",
            "stored": RunSerializer(stored.stored, many=True).data,
            **stored.as_dict(),
        }
    return RunSerializer(stored, many=True).data


def _get_run(slug: str, run_id: int) -> Run:
    return get_object_or_404(Run, pk=run_id, campaign__slug=slug)


class RunView(APIView):
    permission_classes = ORGANISERS

    @extend_schema(responses=RunSerializer)
    def get(self, request: Request, slug: str, run_id: int) -> Response:
        return Response(RunSerializer(_get_run(slug, run_id)).data)

    @extend_schema(
        responses={
            204: OpenApiResponse(description="Deleted, with its files."),
            409: OpenApiResponse(DetailSerializer, description="A pool was built from it."),
        }
    )
    def delete(self, request: Request, slug: str, run_id: int) -> Response:
        """Delete a run no pool was built from (a pooled run stays as it was judged)."""
        run = _get_run(slug, run_id)
        try:
            run_services.run_delete(run=run)
        except RunInUse as error:
            return Response({"detail": f"Not deleted: {error}."}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RunReplaceView(APIView):
    permission_classes = ORGANISERS
    parser_classes = [MultiPartParser]

    @extend_schema(
        request=upload_request("RunReplace"),
        responses={
            **upload_responses(RunSerializer),
            409: OpenApiResponse(DetailSerializer, description="A pool was built from it."),
        },
    )
    def post(self, request: Request, slug: str, run_id: int) -> Response:
        """Replace a run no pool uses by a corrected file, checked like any upload; the
        file may keep the tag or bring a new one. The new run has a new id."""
        run = _get_run(slug, run_id)

        def store(data: dict[str, Any]) -> Run:
            upload = data["file"]
            return run_services.run_replace(
                run=run,
                upload=run_services.RunUpload(upload.name, upload.read()),
                uploaded_by=request.user,
            )

        form = RunReplaceForm(request.data, request.FILES)
        try:
            received = uploads.upload_receive(request, form, store)
        except RunInUse as error:
            return Response({"detail": f"Not replaced: {error}."}, status=status.HTTP_409_CONFLICT)
        return uploads.upload_answer(
            request,
            received,
            lambda new: RunSerializer(new).data,
            rejected="Rejected: the run was not replaced.",
        )
