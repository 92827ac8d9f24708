"""Judgement budgets: an experiment's budget and its audit log, and pools shared by experiments.

Roles: engineers read the budget (spend, plan, audit log) of experiments they own or were
granted, admins all; only admins change budgets and pools (403 for others, nothing
changed); raters 403, anonymous users 401. Every change needs a ``reason`` and is written
to the audit log.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_engineer
from raterapp.models import BudgetChange, BudgetPool
from raterapp.selectors.budgets import budget_changes_list, budget_get, budget_summary_get, pool_summary_get
from raterapp.services.experiments.budgets import budget_update, pool_create, pool_update

from .common import ExperimentRowsApi, IsAdmin, IsEngineerOrAdmin, not_found, refused_unless, validated
from .serializers.budgets import (
    BudgetChangeSerializer,
    BudgetPoolCreateSerializer,
    BudgetPoolSerializer,
    BudgetPoolUpdateSerializer,
    BudgetSerializer,
    BudgetUpdateSerializer,
)

NOT_FOUND = not_found("experiment or pool")
ADMINS_ONLY = refused_unless("admins change budgets")
VIA = BudgetChange.Via.API


def _changes_from(data: dict) -> tuple[dict, str]:
    changes = {key: value for key, value in data.items() if key != "reason"}
    if "pool" in changes and changes["pool"] is not None:
        changes["pool"] = get_object_or_404(BudgetPool, pk=changes["pool"])
    return changes, data["reason"]


class ExperimentBudgetApi(APIView):
    """The experiment's judgement budget: limit, cost per verdict, spent, left, pause, its
    pool, and the plan (further verdicts and cost for each metric to reach the target
    half-width). PATCH (admins): change any of them, with a reason."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: BudgetSerializer, 404: NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        return Response(BudgetSerializer(budget_summary_get(budget=budget_get(experiment=experiment))).data)

    @extend_schema(request=BudgetUpdateSerializer, responses={200: BudgetSerializer, 403: ADMINS_ONLY, 404: NOT_FOUND})
    def patch(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        changes, reason = _changes_from(validated(BudgetUpdateSerializer, request.data))
        budget = budget_update(
            budget=budget_get(experiment=experiment), actor=request.user, changes=changes, reason=reason, via=VIA
        )
        return Response(BudgetSerializer(budget_summary_get(budget=budget)).data)


class ExperimentBudgetChangesApi(ExperimentRowsApi):
    """The audit log of the experiment's budget, newest first."""

    serializer_class = BudgetChangeSerializer
    queryset = BudgetChange.objects.none()
    rows = staticmethod(budget_changes_list)

    def get(self, request, experiment_id: int):
        return self.list(request)


class BudgetPoolsApi(APIView):
    """Budgets shared by several experiments (GET: all; POST: a new one). Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={200: BudgetPoolSerializer(many=True)})
    def get(self, request):
        pools = BudgetPool.objects.order_by("name")
        return Response(BudgetPoolSerializer([pool_summary_get(pool=pool) for pool in pools], many=True).data)

    @extend_schema(request=BudgetPoolCreateSerializer, responses={201: BudgetPoolSerializer, 403: ADMINS_ONLY})
    def post(self, request):
        pool = pool_create(actor=request.user, via=VIA, **validated(BudgetPoolCreateSerializer, request.data))
        return Response(BudgetPoolSerializer(pool_summary_get(pool=pool)).data, status=status.HTTP_201_CREATED)


class BudgetPoolApi(APIView):
    """One pool (GET), or a change to it (PATCH, with a reason). Roles: admin."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={200: BudgetPoolSerializer, 404: NOT_FOUND})
    def get(self, request, pool_id: int):
        return Response(BudgetPoolSerializer(pool_summary_get(pool=get_object_or_404(BudgetPool, pk=pool_id))).data)

    @extend_schema(request=BudgetPoolUpdateSerializer, responses={200: BudgetPoolSerializer, 404: NOT_FOUND})
    def patch(self, request, pool_id: int):
        pool = get_object_or_404(BudgetPool, pk=pool_id)
        changes, reason = _changes_from(validated(BudgetPoolUpdateSerializer, request.data))
        pool = pool_update(pool=pool, actor=request.user, changes=changes, reason=reason, via=VIA)
        return Response(BudgetPoolSerializer(pool_summary_get(pool=pool)).data)
