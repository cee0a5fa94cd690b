"""Judging over the API.

Assessors: their assignments, the next document of one, submitting a
judgment (PUT, idempotent), listing their own judgments, and their notes on
documents (a free note, or setting a document aside as one they cannot judge). Organisers: the
judgments of a pool, filtered. Like the pages, an assessor's responses carry
no rank, run, score, stratum or other assessor's label.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging import services
from judging.models import Assignment, DocumentNote, Judgment
from pooling.models import Document, Pool, PoolEntry
from workbench.api import Filter, OptionalPagination, QueryFilter
from workbench.core.label_schema import LabelError
from workbench.roles import IsOrganiser


class TopicSerializer(serializers.Serializer):
    topic_id = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField()
    narrative = serializers.CharField()


class AssignmentSerializer(serializers.ModelSerializer):
    topic = TopicSerializer(read_only=True)
    campaign = serializers.CharField(source="topic.campaign.slug", read_only=True)
    pool = serializers.CharField(source="pool.name", read_only=True)
    judged = serializers.IntegerField(
        read_only=True,
        help_text="documents judged so far, those a re-plan took out of the queue too",
    )
    total = serializers.IntegerField(
        read_only=True,
        help_text="documents in the queue, and those judged that a re-plan took out of it",
    )

    class Meta:
        model = Assignment
        fields = ["id", "campaign", "pool", "topic", "judged", "total"]


class JudgmentSerializer(serializers.ModelSerializer):
    topic_id = serializers.CharField(source="topic.topic_id", read_only=True)

    class Meta:
        model = Judgment
        fields = [
            "topic_id",
            "docno",
            "relevance",
            "aspects",
            "seconds",
            "created_at",
            "updated_at",
        ]


class PoolJudgmentSerializer(JudgmentSerializer):
    assessor = serializers.CharField(source="assessor.username", read_only=True)

    class Meta(JudgmentSerializer.Meta):
        fields = ["assessor", *JudgmentSerializer.Meta.fields]


class NextDocumentSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    total = serializers.IntegerField()
    judged = serializers.IntegerField()
    docno = serializers.CharField()
    title = serializers.CharField()
    text = serializers.CharField()
    url = serializers.CharField()


class JudgmentInputSerializer(serializers.Serializer):
    relevance = serializers.JSONField(help_text="A relevance grade of the campaign's schema.")
    aspects = serializers.DictField(
        child=serializers.JSONField(),
        required=False,
        help_text="Aspect values by id; required when relevance > 0, ignored otherwise.",
    )
    seconds = serializers.FloatField(required=False, min_value=0, default=0)


class NoteSerializer(serializers.ModelSerializer):
    cannot_judge = serializers.ChoiceField(
        choices=[("", "Can be judged"), *DocumentNote.REASONS],
        required=False,
        allow_blank=True,
        default="",
        help_text="Why the document cannot be judged; blank for a plain note (a document "
        "set aside stays so: the organiser gives it back). A reason takes the document "
        "out of the queue and spends no budget.",
    )

    class Meta:
        model = DocumentNote
        fields = ["docno", "text", "cannot_judge", "created_at", "updated_at"]
        read_only_fields = ["docno", "created_at", "updated_at"]
        extra_kwargs = {"text": {"required": False, "allow_blank": True}}


def _assignment_for(request: Request, assignment_id: int) -> Assignment:
    return get_object_or_404(
        Assignment.objects.open().select_related("topic__campaign", "assessor"),
        pk=assignment_id,
        assessor=request.user,
    )


class AssignmentListView(ListAPIView):
    """The requesting assessor's assignments with their progress."""

    permission_classes = [IsAuthenticated]
    serializer_class = AssignmentSerializer
    pagination_class = OptionalPagination

    def get_queryset(self) -> Any:
        return (
            Assignment.objects.open()
            .filter(assessor=self.request.user)
            .select_related("topic__campaign", "pool")
            .order_by("pool__campaign__name", "pool__created_at", "topic__position")
            .list_with_progress()
        )


class NextDocumentView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            200: NextDocumentSerializer,
            204: OpenApiResponse(description="Every document is judged."),
        }
    )
    def get(self, request: Request, assignment_id: int) -> Response:
        """The first document of the assignment not yet judged."""
        assignment = _assignment_for(request, assignment_id)
        entry = assignment.next_unjudged()
        if entry is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        judged, total = assignment.progress()
        document = Document.objects.filter(
            campaign=assignment.topic.campaign, docno=entry.docno
        ).first()
        return Response(
            {
                "position": entry.position,
                "total": total,
                "judged": judged,
                "docno": entry.docno,
                "title": document.title if document else "",
                "text": document.text if document else "",
                "url": document.url if document else "",
            }
        )


class AssignmentJudgmentsView(ListAPIView):
    """The assessor's own judgments in this assignment, those of documents a re-plan
    took out of her queue too."""

    permission_classes = [IsAuthenticated]
    serializer_class = JudgmentSerializer

    def get_queryset(self) -> Any:
        assignment = _assignment_for(self.request, self.kwargs["assignment_id"])
        return assignment.judgments().select_related("topic")


class JudgmentView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=JudgmentInputSerializer,
        responses={200: JudgmentSerializer, 400: OpenApiResponse(description="Labels rejected.")},
    )
    def put(self, request: Request, assignment_id: int, docno: str) -> Response:
        """Set the labels of one document. Repeating the request changes nothing."""
        assignment = _assignment_for(request, assignment_id)
        payload = JudgmentInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        try:
            judgment = services.judgment_submit(
                assignment=assignment,
                docno=docno,
                relevance=data["relevance"],
                aspects=data.get("aspects") or {},
                seconds=data["seconds"],
            )
        except services.JudgmentError as error:
            return Response({"detail": str(error)}, status=status.HTTP_404_NOT_FOUND)
        except LabelError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(JudgmentSerializer(judgment).data)


class PoolJudgmentsView(ListAPIView):
    """Every judgment on a pool's documents (organisers), with optional filters."""

    permission_classes = [IsAuthenticated, IsOrganiser]
    serializer_class = PoolJudgmentSerializer
    pagination_class = OptionalPagination
    filter_backends = [QueryFilter]
    filters = {
        "topic": Filter("topic__topic_id", "topic id"),
        "assessor": Filter("assessor__username", "username"),
        "relevance": Filter("relevance", "relevance grade", "integer"),
    }

    def get_queryset(self) -> Any:
        pool = get_object_or_404(Pool, pk=self.kwargs["pool_id"])
        in_pool = PoolEntry.objects.filter(
            pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno")
        )
        judgments = Judgment.objects.filter(Exists(in_pool)).select_related("topic", "assessor")
        return judgments.order_by("topic__position", "docno", "assessor__username")


class AssignmentNotesView(ListAPIView):
    """The assessor's own notes on the documents of this assignment, in her queue or
    taken out of it by a re-plan."""

    permission_classes = [IsAuthenticated]
    serializer_class = NoteSerializer

    def get_queryset(self) -> Any:
        assignment = _assignment_for(self.request, self.kwargs["assignment_id"])
        return assignment.notes().order_by("docno")


class NoteView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=NoteSerializer,
        responses={
            200: NoteSerializer,
            204: OpenApiResponse(description="A blank note on a document without one."),
            400: OpenApiResponse(description="Note rejected (reason, length)."),
            404: OpenApiResponse(description="The document is not in the assignment."),
        },
    )
    def put(self, request: Request, assignment_id: int, docno: str) -> Response:
        """Set the note on one document, and with a reason set it aside as one the
        assessor cannot judge. Repeating the request changes nothing."""
        assignment = _assignment_for(request, assignment_id)
        payload = NoteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        text, reason = (
            payload.validated_data.get("text", ""),
            payload.validated_data["cannot_judge"],
        )
        if assignment.entry_of(docno) is None:
            return Response(
                {"detail": f"document {docno!r} is not in this assignment"},
                status=status.HTTP_404_NOT_FOUND,
            )
        try:
            if reason:
                note: DocumentNote | None = services.cannot_judge_record(
                    assignment=assignment, docno=docno, reason=reason, text=text
                )
            else:
                note = services.note_record(
                    assessor=assignment.assessor, topic=assignment.topic, docno=docno, text=text
                )
        except services.NoteError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        except services.JudgmentError as error:
            return Response({"detail": str(error)}, status=status.HTTP_404_NOT_FOUND)
        if note is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(NoteSerializer(note).data)
