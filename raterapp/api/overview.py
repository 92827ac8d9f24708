"""The admins' overview as an API: budgets, spend per experiment and per rater over time,
throughput. Roles: admin (403 for everyone else)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.selectors.overview import spend_overview_get

from .common import IsAdmin


class OverviewApi(APIView):
    """Every experiment's and pool's budget, verdicts and cost per day per experiment, verdicts
    per day per rater (the busiest), verdicts per hour over the last 24 hours. Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(
        parameters=[OpenApiParameter("days", int, description="Days of history, 1 to 90 (default 14).")],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request):
        try:
            days = int(request.query_params.get("days", 14))
        except ValueError:
            raise ValidationError({"days": "Give a whole number of days."}) from None
        if not 1 <= days <= 90:
            raise ValidationError({"days": "Give 1 to 90 days."})
        return Response(spend_overview_get(days=days))
