"""Judging for raters: lease the next pair (blind: two cards, no ids of items or clusters),
keep it, submit or undo a verdict, report a broken pair, read one's own progress.

Roles: raters only; everyone else is refused (403). Experiments that are not open for
rating, and tasks or verdicts outside them or not the rater's, answer 404. Per user, the loop's
requests share the ``rating`` rate (API_RATE_RATING) and the progress a rater's polls'
(``rater_poll``, API_RATE_RATER_POLL); past one, 429 with Retry-After.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import DatabaseError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.fields import DateTimeField
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_rater, access_judgement_for_rater, access_task_for_rater
from raterapp.selectors.judging import CARD_FIELDS, rater_progress_get, task_cards_get
from raterapp.services.judging import (
    JudgementRefused,
    QueueClosed,
    assignment_next,
    judgement_submit,
    judgement_undo,
    leases_renew,
    pair_report_create,
)
from raterapp.signals import SESSION_START_KEY
from raterapp.vocabulary import QueueClosedReason

from .common import IsRater
from .serializers.judging import (
    JudgementCreateSerializer,
    JudgementSerializer,
    JudgementUndoSerializer,
    LeaseRenewRequestSerializer,
    LeaseRenewSerializer,
    NextPairRequestSerializer,
    NextPairSerializer,
    PairReportCreateSerializer,
    PairReportSerializer,
    RaterProgressSerializer,
)

logger = logging.getLogger(__name__)

NOT_FOUND = OpenApiResponse(description="No such experiment, pair or verdict open to you.")
DEGRADED = "The verdict is stored; the next pair and the progress could not be read: ask for the next pair again."
REFUSED = OpenApiResponse(description="Refused; nothing was recorded.")


def _progress(request, experiment) -> dict:
    started = request.session.get(SESSION_START_KEY) if hasattr(request, "session") else None
    session_start = datetime.fromisoformat(started) if started else None
    return rater_progress_get(experiment=experiment, rater=request.user, session_start=session_start)


def _pair(task, rater) -> dict:
    left, right = task_cards_get(task=task, rater=rater)
    return {"task": task.pk, "lease_expires_at": task.lease.expires_at, "left": left, "right": right}


# The loop's two answers are built as plain data, shaped as NextPairSerializer and
# JudgementSerializer describe them (the schema): DRF copies a serializer's fields for every
# instance (and a ModelSerializer reads its model again), milliseconds on the hottest requests.
_DATETIME = DateTimeField()


def _pair_data(pair: dict | None) -> dict | None:
    if pair is None:
        return None
    cards = {side: {field: pair[side][field] for field in CARD_FIELDS} for side in ("left", "right")}
    return {"task": pair["task"], "lease_expires_at": _DATETIME.to_representation(pair["lease_expires_at"]), **cards}


def _leased_pair(experiment, rater, holding) -> dict:
    """The next pair leased to the rater, or null with the reason the queue is closed to them;
    :class:`JudgementRefused` when they hold two pairs already."""
    try:
        task = assignment_next(experiment=experiment, rater=rater, holding=holding)
    except QueueClosed as exc:
        return {"pair": None, "reason": str(exc.reason)}
    if task is None:
        return {"pair": None, "reason": str(QueueClosedReason.QUEUE_EMPTY)}
    return {"pair": _pair_data(_pair(task, rater)), "reason": None}


def _judgement_data(judgement, progress: dict | None) -> dict:
    return {
        "id": judgement.pk,
        "task": judgement.task_id,
        "verdict": judgement.verdict,
        "client_id": str(judgement.client_id),
        "comment": judgement.comment,
        "created_at": _DATETIME.to_representation(judgement.created_at),
        "progress": progress,
    }


class NextPairApi(APIView):
    """Lease the next pair to judge, not one of ``holding`` (the pairs the page already
    shows or preloaded); a pair the rater holds elsewhere is renewed and returned. ``pair``
    is null when nothing is left for this rater, with ``reason`` saying why
    (``queue_empty``, ``quota_daily``, ``quota_total``, ``budget_spent``,
    ``budget_paused``, ``rater_paused``: an admin paused the rater, ``not_assigned``: the
    experiment was assigned to other raters). 409 when the rater already holds
    two pairs. A page sends its pending verdict before asking: a pair whose verdict is
    still on its way is held, and so handed back. Roles: rater."""

    permission_classes = [IsRater]
    throttle_scope = "rating"

    @extend_schema(request=NextPairRequestSerializer, responses={200: NextPairSerializer, 404: NOT_FOUND, 409: REFUSED})
    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_rater(request.user, experiment_id)
        data = NextPairRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        body = {
            **_leased_pair(experiment, request.user, data.validated_data["holding"]),
            "question": str(experiment.question),
            "guidelines": str(experiment.guidelines),
            "progress": _progress(request, experiment),
        }
        return Response(body)


class JudgementCreateApi(APIView):
    """Submit a verdict on a leased pair: 201 when recorded, 200 when ``client_id`` repeats
    a recorded one (a retry), 409 when refused, with the reason in ``detail`` (already
    judged, not assigned, no slot left, undone, the rater's quota or the budget spent,
    also for a verdict on an expired lease); a refused verdict is not stored. The answer
    carries the rater's progress and, when the request has ``next``, the next pair leased
    as next-pair would lease it, once the verdict is stored: one round trip a verdict.
    Roles: rater."""

    permission_classes = [IsRater]
    throttle_scope = "rating"

    @extend_schema(
        request=JudgementCreateSerializer,
        responses={
            201: JudgementSerializer,
            200: JudgementSerializer,
            400: OpenApiResponse(description="Invalid verdict or client_id."),
            404: NOT_FOUND,
            409: REFUSED,
        },
    )
    def post(self, request):
        data = JudgementCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        task = access_task_for_rater(request.user, data.validated_data["task"])
        judgement, created = judgement_submit(
            task=task,
            rater=request.user,
            verdict=data.validated_data["verdict"],
            client_id=data.validated_data["client_id"],
            comment=data.validated_data["comment"],
        )
        wants_next = data.validated_data.get("next")
        following, progress, degraded = None, None, None
        try:
            if wants_next is not None:
                try:
                    following = _leased_pair(task.experiment, request.user, wants_next["holding"])
                except JudgementRefused:
                    pass  # the verdict is stored; `next` null tells the page to ask next-pair
            progress = _progress(request, task.experiment)
        except DatabaseError as error:
            # The verdict is committed: what follows it failing (the database lost a moment) must
            # not answer 500, which a client would take for a verdict not stored.
            logger.warning("verdict %s stored; next pair or progress failed: %s", judgement.pk, error)
            following = None
            degraded = DEGRADED
        body = _judgement_data(judgement, progress)
        if wants_next is not None:
            body["next"] = following
        if degraded:
            body["degraded"] = degraded
        return Response(body, status=201 if created else 200)


class JudgementUndoApi(APIView):
    """Take back one of one's verdicts of the last ``UNDO_SECONDS``, any of them (several undos
    step back through them): it is kept aside and counted nowhere, its budget unit is given back,
    and its pair is leased back to be answered afresh with a new ``client_id``. 409 for a too old
    or an undone verdict, or when the rater holds too many pairs (answer one first). Roles: rater (own verdicts)."""

    permission_classes = [IsRater]
    throttle_scope = "rating"

    @extend_schema(request=None, responses={200: JudgementUndoSerializer, 404: NOT_FOUND, 409: REFUSED})
    def post(self, request, judgement_id: int):
        judgement = access_judgement_for_rater(request.user, judgement_id)
        task = judgement_undo(judgement_id=judgement.pk, rater=request.user)
        body = {"pair": _pair(task, request.user), "progress": _progress(request, task.experiment)}
        return Response(JudgementUndoSerializer(body).data)


class PairReportCreateApi(APIView):
    """Report a held pair as broken (data missing or unreadable): the pair is released,
    never offered to this rater again, stays unjudged and is listed for admins. 201 when
    recorded, 200 for a repeat. Roles: rater."""

    permission_classes = [IsRater]
    throttle_scope = "rating"

    @extend_schema(
        request=PairReportCreateSerializer,
        responses={201: PairReportSerializer, 200: PairReportSerializer, 404: NOT_FOUND, 409: REFUSED},
    )
    def post(self, request, task_id: int):
        task = access_task_for_rater(request.user, task_id)
        data = PairReportCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report, created = pair_report_create(task=task, rater=request.user, **data.validated_data)
        report.progress = _progress(request, task.experiment)  # type: ignore[attr-defined]  # for the serializer
        return Response(PairReportSerializer(report).data, status=201 if created else 200)


class LeaseRenewApi(APIView):
    """Keep the pairs a rater's page holds: each lease is extended by ``LEASE_SECONDS``;
    ``lost`` lists the tasks whose lease is gone (expired and taken, or judged).
    Roles: rater."""

    permission_classes = [IsRater]
    throttle_scope = "rating"

    @extend_schema(request=LeaseRenewRequestSerializer, responses={200: LeaseRenewSerializer})
    def post(self, request):
        data = LeaseRenewRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        renewed, lost = leases_renew(rater=request.user, task_ids=data.validated_data["tasks"])
        body = {"leases": [{"task": lease.task_id, "lease_expires_at": lease.expires_at} for lease in renewed]}
        return Response(LeaseRenewSerializer({**body, "lost": lost}).data)


class RaterProgressApi(APIView):
    """The rater's own progress in an experiment: this session, today, in all, what the
    experiment still wants and their quota. Roles: rater."""

    permission_classes = [IsRater]
    throttle_scope = "rater_poll"

    @extend_schema(responses={200: RaterProgressSerializer, 404: NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_rater(request.user, experiment_id)
        return Response(RaterProgressSerializer(_progress(request, experiment)).data)
