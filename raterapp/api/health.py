"""Health: a cheap answer for anyone (load balancers, uptime checks), the details for admins."""

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.selectors.health import health_brief_get, health_get

from .common import IsAdmin


class HealthApi(APIView):
    """Whether the database and Redis answer: no worker round trip, no host names, no throttle.
    Roles: anyone."""

    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_classes: list = []

    @extend_schema(responses={200: dict, 503: dict})
    def get(self, request):
        report = health_brief_get()
        return Response(report, status=200 if report["ok"] else 503)


class HealthDetailApi(APIView):
    """Status of the database, Redis and the Celery workers (by host name; up to a second to
    ping them). Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={200: dict, 503: dict})
    def get(self, request):
        report = health_get()
        return Response(report, status=200 if report["ok"] else 503)
