"""Machine clients of a task campaign (CodiEsp, SciFact): upload gold files and
submissions, fetch the scores of a subtask and each submission's documents.

The same services and selectors as the pages: a rejected file answers 400 with
every problem as `file`, `line`, `reason`, and nothing is stored.
"""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from pooling.models import Campaign
from pooling.serializers import RejectedSerializer
from scoring import background, services, task_selectors
from scoring.core.tasks import subtasks
from scoring.core.tasks.subtasks import Subtask
from scoring.models import MAX_SUBMISSION_NAME, SUBTASK_CHOICES, TaskGold, TaskSubmission
from workbench import uploads
from workbench.job_api import job_result_answer, job_result_responses
from workbench.roles import IsOrganiser


class TaskGoldSerializer(serializers.ModelSerializer):
    uploaded_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = TaskGold
        fields = [
            "subtask",
            "original_name",
            "sha256",
            "document_count",
            "codes_names",
            "code_count",
            "uploaded_by",
            "uploaded_at",
        ]


class TaskSubmissionSerializer(serializers.ModelSerializer):
    uploaded_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = TaskSubmission
        fields = [
            "id",
            "subtask",
            "name",
            "original_name",
            "sha256",
            "document_count",
            "uploaded_by",
            "uploaded_at",
        ]


class _SubtaskSerializer(serializers.Serializer):
    """Input whose `subtask` is one of the campaign's (context["subtasks"])."""

    subtask = serializers.ChoiceField(choices=SUBTASK_CHOICES)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        campaign_subtasks = self.context.get("subtasks")
        if campaign_subtasks is not None:
            self.fields["subtask"].choices = [(s.code, s.label) for s in campaign_subtasks]


class TaskGoldUploadSerializer(_SubtaskSerializer):
    file = serializers.FileField(allow_empty_file=True)
    codes = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True),
        required=False,
        default=list,
        help_text="CodiEsp: the valid-code lists (D's for D, P's for P, both for X).",
    )


class TaskSubmissionUploadSerializer(_SubtaskSerializer):
    name = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MAX_SUBMISSION_NAME,
        help_text="Default: the file's name without its extension.",
    )
    file = serializers.FileField(allow_empty_file=True)


class TaskSortSerializer(serializers.Serializer):
    sort = serializers.ChoiceField(choices=[], required=False)

    def __init__(self, *args: Any, subtask: Subtask, documents: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["sort"].choices = subtasks.sort_choices(subtask, documents=documents)
        self.default = subtasks.default_sort(subtask, documents=documents)

    def order(self) -> str:
        self.is_valid(raise_exception=True)
        return self.validated_data.get("sort") or self.default


_SCORES = serializers.DictField(
    child=serializers.FloatField(allow_null=True),
    help_text="Each measure; null where the official scorer gives NaN.",
)


class ScoredSubmissionSerializer(serializers.Serializer):
    submission = TaskSubmissionSerializer()
    scores = _SCORES


class TaskScoresSerializer(serializers.Serializer):
    subtask = serializers.CharField()
    measures = serializers.ListField(child=serializers.CharField(), help_text="In table order.")
    sort = serializers.CharField(help_text="The order of `submissions`.")
    gold = TaskGoldSerializer(allow_null=True, help_text="null: no gold yet, no scores.")
    submissions = ScoredSubmissionSerializer(many=True)


class DocumentScoresSerializer(serializers.Serializer):
    document = serializers.CharField(help_text="A clinical case id or a claim id.")
    scores = _SCORES


class SubmissionScoresSerializer(serializers.Serializer):
    submission = TaskSubmissionSerializer()
    scores = _SCORES
    document = serializers.CharField(help_text="What one document is: clinical case, claim.")
    document_measures = serializers.ListField(child=serializers.CharField())
    sort = serializers.CharField(help_text="The order of `documents`.")
    documents = DocumentScoresSerializer(many=True)


def _numbers(values: dict[str, float]) -> dict[str, float | None]:
    return {name: None if math.isnan(value) else value for name, value in values.items()}


def _task_campaign(slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if not campaign.is_task:
        raise Http404(f"{campaign.name} is a ranked retrieval campaign, not a task campaign.")
    return campaign


_UPLOAD_RESPONSES = {
    400: OpenApiResponse(RejectedSerializer, description="Rejected; nothing stored."),
    413: OpenApiResponse(description="A file over WORKBENCH_MAX_UPLOAD_BYTES."),
}


class TaskGoldView(APIView):
    """GET lists a task campaign's gold files; POST stores one (replacing its subtask's)."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    parser_classes = [MultiPartParser]

    @extend_schema(responses=TaskGoldSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        campaign = _task_campaign(slug)
        return Response(TaskGoldSerializer(campaign.task_golds.all(), many=True).data)

    @extend_schema(
        request={"multipart/form-data": TaskGoldUploadSerializer},
        responses={201: TaskGoldSerializer, **_UPLOAD_RESPONSES},
        description="Every line of the gold and its valid-code lists is checked first; a SciFact "
        "gold must also fit the submissions already stored. Rejected: 400, nothing stored.",
    )
    def post(self, request: Request, slug: str) -> Response:
        campaign = _task_campaign(slug)
        form = TaskGoldUploadSerializer(
            data=request.data, context={"subtasks": task_selectors.campaign_subtasks(campaign)}
        )

        def store(data: dict[str, Any]) -> Any:
            return services.task_gold_upload(
                campaign=campaign,
                subtask=data["subtask"],
                gold=services.TaskUpload(data["file"].name, data["file"]),
                codes=[services.TaskUpload(f.name, f) for f in data["codes"]],
                uploaded_by=request.user,
            )

        received = uploads.upload_receive(request, form, store)
        return uploads.upload_answer(request, received, lambda g: TaskGoldSerializer(g).data)


class TaskSubmissionsView(APIView):
    """GET lists a task campaign's submissions; POST stores one."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    parser_classes = [MultiPartParser]

    @extend_schema(responses=TaskSubmissionSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        campaign = _task_campaign(slug)
        submissions = campaign.task_submissions.select_related("uploaded_by")
        return Response(TaskSubmissionSerializer(submissions, many=True).data)

    @extend_schema(
        request={"multipart/form-data": TaskSubmissionUploadSerializer},
        responses={201: TaskSubmissionSerializer, **_UPLOAD_RESPONSES},
        description="Checked against its subtask's gold (which must be stored first) with "
        "the official readers' rules, under a name not yet used in the subtask.",
    )
    def post(self, request: Request, slug: str) -> Response:
        campaign = _task_campaign(slug)
        form = TaskSubmissionUploadSerializer(
            data=request.data, context={"subtasks": task_selectors.campaign_subtasks(campaign)}
        )

        def store(data: dict[str, Any]) -> Any:
            return services.task_submission_upload(
                campaign=campaign,
                subtask=data["subtask"],
                upload=services.TaskUpload(data["file"].name, data["file"]),
                name=data["name"],
                uploaded_by=request.user,
            )

        try:
            received = uploads.upload_receive(request, form, store)
        except ValidationError as error:
            return Response({"detail": " ".join(error.messages)}, status=400)
        return uploads.upload_answer(
            request, received, lambda submission: TaskSubmissionSerializer(submission).data
        )


class TaskReplaceSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True)


class TaskSubmissionReplaceView(APIView):
    permission_classes = [IsAuthenticated, IsOrganiser]
    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": TaskReplaceSerializer},
        responses={200: TaskSubmissionSerializer, **_UPLOAD_RESPONSES},
        description="Replace a submission's file in one step: checked against its subtask's "
        "gold first; it keeps its id, name and subtask. Rejected: 400, nothing changed.",
    )
    def post(self, request: Request, slug: str, submission_id: int) -> Response:
        campaign = _task_campaign(slug)
        submission = get_object_or_404(TaskSubmission, pk=submission_id, campaign=campaign)
        form = TaskReplaceSerializer(data=request.data)

        def store(data: dict[str, Any]) -> Any:
            file = data["file"]
            return services.task_submission_replace(
                submission=submission,
                upload=services.TaskUpload(file.name, file),
                uploaded_by=request.user,
            )

        received = uploads.upload_receive(request, form, store)
        return uploads.upload_answer(
            request,
            received,
            lambda replaced: TaskSubmissionSerializer(replaced).data,
            rejected="Rejected: the submission was not replaced.",
            stored=status.HTTP_200_OK,
        )


_SORT = OpenApiParameter(
    "sort",
    str,
    description="A column (`name`, or a measure), `-column` for descending. "
    "Default: the subtask's ranking measure, best first (documents: in order).",
)


_STATE = "gold and submissions"  # what a task's scores job scored


def _task_subtask(campaign: Campaign, code: str) -> Subtask:
    try:
        return subtasks.subtask(campaign.task_kind, code)
    except KeyError:
        raise Http404(f"{campaign.name} has no subtask {code!r}.") from None


class TaskScoresView(APIView):
    """Every submission of a subtask scored against its gold as the official scorer
    does. A subtask whose submissions are too many bytes for a request
    (WORKBENCH_UPLOAD_JOB_BYTES, all of them together) is scored by a job, as on
    the page: POST starts it (202), GET answers once it is done."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    _get, _post = job_result_responses(
        TaskScoresSerializer, {400: OpenApiResponse(description="A bad sort.")}
    )

    @extend_schema(parameters=[_SORT], responses=_get)
    def get(self, request: Request, slug: str, subtask: str) -> Response:
        return self._answer(request, slug, subtask)

    @extend_schema(parameters=[_SORT], request=None, responses=_post)
    def post(self, request: Request, slug: str, subtask: str) -> Response:
        """Score a subtask of many bytes in a job (or give the job already at it or
        done with it)."""
        return self._answer(request, slug, subtask)

    @staticmethod
    def _answer(request: Request, slug: str, subtask: str) -> Response:
        campaign = _task_campaign(slug)
        task_subtask = _task_subtask(campaign, subtask)
        order = TaskSortSerializer(data=request.query_params, subtask=task_subtask).order()
        context: dict[str, Any] = {}  # the job's, for a subtask of many bytes
        table = background.task_scores(
            request, campaign=campaign, subtask=task_subtask, sort=order, context=context
        )

        def answer(scored: task_selectors.TaskScores) -> Response:
            body = {
                "subtask": task_subtask.code,
                "measures": list(task_subtask.measures),
                "sort": scored.sort,
                "gold": scored.gold,
                "submissions": [
                    {"submission": row.submission, "scores": _numbers(row.scores.measures)}
                    for row in scored.rows
                ],
            }
            return Response(TaskScoresSerializer(body).data)

        return job_result_answer(request, context, "scores", table, answer, state=_STATE)


class TaskSubmissionView(APIView):
    """A submission's scores and each clinical case's or claim's values; scored by the
    job of its subtask when that is too large for a request (see the scores)."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    _get, _post = job_result_responses(
        SubmissionScoresSerializer, {400: OpenApiResponse(description="A bad sort.")}
    )

    def _submission(self, slug: str, submission_id: int) -> TaskSubmission:
        campaign = _task_campaign(slug)
        return get_object_or_404(
            TaskSubmission.objects.select_related("campaign"), pk=submission_id, campaign=campaign
        )

    @extend_schema(parameters=[_SORT], responses=_get)
    def get(self, request: Request, slug: str, submission_id: int) -> Response:
        """A submission's scores and each clinical case's or claim's values."""
        return self._answer(request, slug, submission_id)

    @extend_schema(
        parameters=[_SORT],
        request=None,
        responses=_post,
        operation_id="campaigns_submissions_score",
    )
    def post(self, request: Request, slug: str, submission_id: int) -> Response:
        """Score the submission's subtask in a job, when it is too large for a request."""
        return self._answer(request, slug, submission_id)

    def _answer(self, request: Request, slug: str, submission_id: int) -> Response:
        submission = self._submission(slug, submission_id)
        task_subtask = _task_subtask(submission.campaign, submission.subtask)
        order = TaskSortSerializer(
            data=request.query_params, subtask=task_subtask, documents=True
        ).order()
        context: dict[str, Any] = {}
        drill = background.task_submission_documents(
            request, submission=submission, subtask=task_subtask, sort=order, context=context
        )

        def answer(scored: task_selectors.SubmissionDocuments) -> Response:
            body = {
                "submission": submission,
                "scores": _numbers(scored.scores.measures),
                "document": task_subtask.document,
                "document_measures": list(task_subtask.document_measures),
                "sort": scored.sort,
                "documents": [
                    {"document": document, "scores": _numbers(values)}
                    for document, values in scored.rows
                ],
            }
            return Response(SubmissionScoresSerializer(body).data)

        return job_result_answer(request, context, "scores", drill, answer, state=_STATE)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, submission_id: int) -> Response:
        """Remove a submission and its file."""
        services.task_submission_delete(submission=self._submission(slug, submission_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
