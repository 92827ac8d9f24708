"""The decision loop as an API: the headline decision and its rule, and more draws when the
answer is not there yet (abcde-spec §9–§10).

Roles: engineers read the experiments they own or were granted, admins all; only the owner or
an admin changes the rule or draws a batch (403 for a granted engineer, nothing changed);
raters 403, anonymous users 401; an experiment that is not visible 404.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_engineer, access_experiment_for_owner
from raterapp.selectors import batches
from raterapp.selectors.batches import sample_batch_as_dict, sample_batch_plan_get, sample_batches_list
from raterapp.selectors.dashboard import experiment_dashboard_get
from raterapp.services.experiments.control import (
    experiment_decision_set,
    experiment_model_assisted_set,
    experiment_recall_base_set,
)
from raterapp.services.sampling.batches import sample_batch_request

from .common import EXPERIMENT_NOT_FOUND, OWNER_ONLY, IsEngineerOrAdmin, change_schema, owner_setting_put, validated


class DecisionRuleSerializer(serializers.Serializer):
    decision_metric = serializers.CharField(
        allow_blank=True,
        max_length=40,
        help_text="DeltaPrecision or GoodMinusBadDistance; empty: the scheme's default.",
    )
    equivalence_margin = serializers.FloatField(
        help_text="Differences within ±margin count as no meaningful difference."
    )


class RecallBaseRangeSerializer(serializers.Serializer):
    recall_base_low = serializers.FloatField(help_text="Lowest Recall_Base(AffectedItems) assumed, in (0, 1].")
    recall_base_high = serializers.FloatField(help_text="Highest Recall_Base(AffectedItems) assumed, at least low.")


class ModelAssistedSerializer(serializers.Serializer):
    model_assisted = serializers.BooleanField(
        help_text="Estimates corrected from a score of every drawn pair (abcde-spec §15; default true); "
        "false: the human-only estimates."
    )


class BatchRequestSerializer(serializers.Serializer):
    draws = serializers.IntegerField(
        min_value=1, help_text=f"Draws of the new batch: 1 to {batches.MAX_BATCH_DRAWS}, within the sample's room."
    )
    request_id = serializers.UUIDField(
        required=False, allow_null=True,
        help_text="Your id of this request (a UUID): sent again (a double click, a retry), it returns the batch "
        "the first request asked for and draws nothing more.",
    )  # fmt: skip

    def validate_draws(self, draws: int) -> int:
        """The one batch limit the form proposes within too (``selectors.batches``)."""
        if draws > batches.MAX_BATCH_DRAWS:
            raise serializers.ValidationError(f"Ensure this value is less than or equal to {batches.MAX_BATCH_DRAWS}.")
        return draws


class ExperimentDecisionApi(APIView):
    """The headline: Exp is better / worse / no meaningful difference / not enough data yet, from
    the deciding metric's confidence sequence and the equivalence margin, with the numbers behind
    it, whether unsure verdicts could flip it, and the verdicts and cost expected to settle it.
    PUT changes the rule (owner or admin)."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: EXPERIMENT_NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        return Response(experiment_dashboard_get(experiment=experiment)["decision"])

    @extend_schema(request=DecisionRuleSerializer, responses={200: DecisionRuleSerializer, 403: OWNER_ONLY})
    def put(self, request, experiment_id: int):
        return owner_setting_put(request, experiment_id, DecisionRuleSerializer, experiment_decision_set)


class ExperimentRecallBaseApi(APIView):
    """The Recall_Base(AffectedItems) range ΔRecall and IQ assume (abcde-spec §14; default 40-80%):
    their interval spans it. With a ground-truth clustering its own Recall_Base is used instead.
    PUT changes the range (owner or admin) and recomputes them."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: RecallBaseRangeSerializer, 404: EXPERIMENT_NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        return Response(RecallBaseRangeSerializer(experiment).data)

    @extend_schema(request=RecallBaseRangeSerializer, responses={200: RecallBaseRangeSerializer, 403: OWNER_ONLY})
    def put(self, request, experiment_id: int):
        return owner_setting_put(request, experiment_id, RecallBaseRangeSerializer, experiment_recall_base_set)


class ExperimentModelAssistedApi(APIView):
    """Whether every estimate and the headline are model-assisted: corrected from a score of every
    drawn pair (the built-in card similarity, or uploaded scores) by the human verdicts (abcde-spec
    §15). PUT turns it on or off (owner or admin) and estimates again."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: ModelAssistedSerializer, 404: EXPERIMENT_NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        return Response(ModelAssistedSerializer(experiment).data)

    @extend_schema(request=ModelAssistedSerializer, responses={200: ModelAssistedSerializer, 403: OWNER_ONLY})
    def put(self, request, experiment_id: int):
        return owner_setting_put(request, experiment_id, ModelAssistedSerializer, experiment_model_assisted_set)


class ExperimentBatchesApi(APIView):
    """The batches of draws of the experiment's sample (batch 0 is the first sample), with who
    drew each and what it added: ``new_pairs``, pairs of two different items no earlier batch
    drew, which became tasks for the raters (the plan's ``new_pairs`` estimates this number;
    ``new_tasks`` is the same count, kept for older clients); ``new_sample_rows``, the sample's
    new rows, which also count each order of a pair and items drawn with themselves;
    ``repeated_pairs``, rows drawn again. POST asks for another batch (owner or admin): 202, the
    worker draws it; new pairs become tasks, pairs drawn again get more draws."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: EXPERIMENT_NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        return Response({"batches": sample_batches_list(experiment=experiment)})

    @change_schema(
        BatchRequestSerializer, OpenApiTypes.OBJECT, status=202, invalid="Not now, or too many.", refused=OWNER_ONLY
    )
    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_owner(request.user, experiment_id)
        data = validated(BatchRequestSerializer, request.data)
        draws = data["draws"]
        plan = sample_batch_plan_get(experiment=experiment, draws=draws)
        batch = sample_batch_request(
            experiment=experiment,
            actor=request.user,
            draws=draws,
            expected_verdicts=plan["verdicts"],
            request_id=data.get("request_id"),
        )
        return Response(sample_batch_as_dict(batch), status=status.HTTP_202_ACCEPTED)


class ExperimentBatchPlanApi(APIView):
    """What another batch of ``draws`` draws is expected to add before it is drawn: ``new_pairs``,
    new pairs to judge (Good–Turing; the batch's ``new_pairs`` once drawn), verdicts at the
    experiment's replication, their cost, and the budget left."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(
        parameters=[OpenApiParameter("draws", int, required=True, description=f"1 to {batches.MAX_BATCH_DRAWS}.")],
        responses={200: OpenApiTypes.OBJECT, 404: EXPERIMENT_NOT_FOUND},
    )
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        draws = validated(BatchRequestSerializer, {"draws": request.query_params.get("draws")})["draws"]
        if experiment.status not in ("rating", "done"):
            return Response({"detail": "No plan: more draws are not possible for this experiment now."}, status=400)
        return Response(sample_batch_plan_get(experiment=experiment, draws=draws))
