from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.selectors.health import health_get


class HealthApi(APIView):
    """Status of the database, Redis and the Celery workers. Roles: anyone (no secrets in it)."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(responses={200: dict, 503: dict})
    def get(self, request):
        report = health_get()
        return Response(report, status=200 if report["ok"] else 503)
