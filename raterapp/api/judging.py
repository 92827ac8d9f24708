"""Judging for raters: take the next pair (blind: two cards, no ids of items or clusters), submit a verdict.

Roles: raters only; everyone else is refused (403). Experiments that are not open for
rating and tasks outside them answer 404.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_rater, access_task_for_rater
from raterapp.selectors.judging import task_cards_get
from raterapp.services.judging import JudgementRefused, assignment_next, judgement_submit

from .common import Conflict, IsRater, drf_validation_error
from .serializers import JudgementCreateSerializer, JudgementSerializer, NextPairSerializer


class NextPairApi(APIView):
    """Lease the next pair to judge (or renew the one the rater holds): 200 with the task,
    its lease expiry and the two item cards in random left/right order; 204 when no pair
    is left for this rater. Roles: rater."""

    permission_classes = [IsRater]

    @extend_schema(
        request=None,
        responses={
            200: NextPairSerializer,
            204: OpenApiResponse(description="Nothing left to judge for you."),
            404: OpenApiResponse(description="No such experiment open for rating."),
        },
    )
    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_rater(request.user, experiment_id)
        task = assignment_next(experiment=experiment, rater=request.user)
        if task is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        left, right = task_cards_get(task=task)
        body = {
            "task": task.pk,
            "lease_expires_at": task.lease.expires_at,
            "question": experiment.question,
            "guidelines": experiment.guidelines,
            "left": left,
            "right": right,
        }
        return Response(NextPairSerializer(body).data)


class JudgementCreateApi(APIView):
    """Submit a verdict on a leased pair: 201 when recorded, 200 when ``client_id`` repeats
    a recorded one (a retry), 409 when refused (already judged, not assigned, no slot left).
    Roles: rater."""

    permission_classes = [IsRater]

    @extend_schema(
        request=JudgementCreateSerializer,
        responses={
            201: JudgementSerializer,
            200: JudgementSerializer,
            400: OpenApiResponse(description="Invalid verdict or client_id."),
            404: OpenApiResponse(description="No such pair open for rating."),
            409: OpenApiResponse(description="Refused; nothing was recorded."),
        },
    )
    def post(self, request):
        data = JudgementCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        task = access_task_for_rater(request.user, data.validated_data["task"])
        try:
            judgement, created = judgement_submit(
                task=task,
                rater=request.user,
                verdict=data.validated_data["verdict"],
                client_id=data.validated_data["client_id"],
                comment=data.validated_data["comment"],
            )
        except ValidationError as exc:
            raise drf_validation_error(exc) from None
        except JudgementRefused as exc:
            raise Conflict(str(exc)) from None
        return Response(JudgementSerializer(judgement).data, status=201 if created else 200)
