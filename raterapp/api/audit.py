"""The audit log of people and access (raters' quotas, pauses and assignments, users' roles and
accounts, API tokens, verdicts changed or voided, failed experiments deleted), newest first,
paginated, filtered by whose, kind, who and experiment: the console's audit page reads the same
selector. Roles: admin; everyone else 403."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers

from raterapp.models import AuditEntry
from raterapp.selectors.audit import KINDS, audit_entries_list

from .common import IsAdmin, validated


class AuditEntrySerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", default=None, help_text="Empty: the app itself.")
    subject = serializers.CharField(source="subject.username")

    class Meta:
        model = AuditEntry
        fields = (
            "id", "created_at", "action", "actor", "subject", "subject_id", "experiment_id", "field",
            "old_value", "new_value", "reason",
        )  # fmt: skip


class AuditQuerySerializer(serializers.Serializer):
    user = serializers.IntegerField(required=False, min_value=1)
    experiment = serializers.IntegerField(required=False, min_value=1)
    kind = serializers.ChoiceField(required=False, choices=KINDS)
    actor = serializers.IntegerField(required=False, min_value=1)


@extend_schema(
    parameters=[
        OpenApiParameter("user", int, description="Only entries about this user (id)."),
        OpenApiParameter("experiment", int, description="Only entries about this experiment (id)."),
        OpenApiParameter("kind", str, enum=[kind for kind, _ in KINDS], description="Only entries of this kind."),
        OpenApiParameter("actor", int, description="Only changes made by this user (id)."),
    ]
)
class AuditEntriesApi(generics.ListAPIView):
    permission_classes = [IsAdmin]
    serializer_class = AuditEntrySerializer

    def get(self, request):
        return self.list(request)

    def get_queryset(self):
        query = validated(AuditQuerySerializer, self.request.query_params)
        return audit_entries_list(
            subject_id=query.get("user"),
            experiment_id=query.get("experiment"),
            action=query.get("kind"),
            actor_id=query.get("actor"),
        )
