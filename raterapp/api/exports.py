"""Downloads of an experiment's sampled pairs, verdicts and estimates, as JSON or CSV.

The pair and verdict files have the columns of the metrics_core command line first
(``i, j, pair_class, stratum, draws, scheme`` and ``i, j, verdict``, item ids), so
``python -m metrics_core estimate ITEMS pairs.csv judgements.csv`` reproduces the
estimates outside the app. A draw-order experiment's pairs file has one row per batch that drew
a pair, with ``batch`` and ``positions``, so the command line uses the labelled prefix as the app
does (abcde-spec §14); its judgements file closes each pair excluded after a report without a
verdict with an ``unsure`` row without rater, which the command line counts as resolved, as the app
does. Choose the format with ``?format=csv|json`` or ``Accept``.

Roles: engineer (own or granted experiments), admin; raters 403, anonymous users 401;
an experiment that is not visible 404.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from metrics_core import DERIVED_METRICS, IMPACT_METRICS
from raterapp.access import access_experiment_for_engineer
from raterapp.selectors.derived import derived_latest, recall_base_assumption
from raterapp.selectors.draw_order import judgements_export_rows, pairs_export_fields, pairs_export_rows
from raterapp.selectors.experiments import estimate_snapshot_latest
from raterapp.selectors.samples import JUDGEMENT_FIELDS, PAIR_FIELDS

from .common import FORMAT, ExperimentReadApi, ExportApi, download_responses
from .serializers.estimates import EstimateRowSerializer, EstimateSnapshotSerializer, JudgementExportSerializer
from .serializers.experiments import SampledPairSerializer

ESTIMATE_FIELDS = (
    "metric", "value", "stderr", "ci_low", "ci_high", "judged_draws", "drawn_draws",
    "cs_low", "cs_high", "unsure_low", "unsure_high", "recall_base_low", "recall_base_high", "assumption",
    "estimator", "lambda", "verdicts_saved",
)  # fmt: skip


def export_schema(json_body):
    return extend_schema(parameters=[FORMAT], responses=download_responses(json_body))


class _RowsExportApi(ExperimentReadApi, ExportApi):
    """Every row ``read`` reads, in JSON or CSV."""

    many = True


class ExperimentPairsExportApi(_RowsExportApi):
    """All sampled pairs (columns as /pairs/). Roles: engineer (own or granted), admin."""

    export_name = "pairs"
    csv_fields = PAIR_FIELDS
    body_serializer = SampledPairSerializer
    read = staticmethod(pairs_export_rows)

    @export_schema(SampledPairSerializer(many=True))
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)

    def body(self, experiment):
        self.csv_fields = pairs_export_fields(experiment=experiment)  # positions in draw order only
        return super().body(experiment)


class ExperimentJudgementsExportApi(_RowsExportApi):
    """All verdicts, oldest first, with the item ids of their pair and the rater's user id; in draw
    order, then a row without rater for each pair excluded after a report without a verdict (the
    command line's way to say the pair is closed). Roles: engineer (own or granted), admin."""

    export_name = "judgements"
    csv_fields = JUDGEMENT_FIELDS
    body_serializer = JudgementExportSerializer
    read = staticmethod(judgements_export_rows)

    @export_schema(JudgementExportSerializer(many=True))
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)


class ExperimentImpactExportApi(ExportApi):
    """The exact impact metrics over all items, one row per metric in the papers' order (as the
    impact table of the experiment page). Roles: engineer (own or granted), admin."""

    export_name = "impact"
    csv_fields = ("metric", "value")

    @export_schema(OpenApiTypes.OBJECT)
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        if not experiment.impact:
            raise NotFound("No impact metrics yet: the experiment is not prepared.")
        if request.accepted_renderer.format == "csv":
            metrics = experiment.impact["metrics"]
            return Response([{"metric": name, "value": metrics[name]} for name in IMPACT_METRICS if name in metrics])
        return Response(experiment.impact)


class ExperimentEstimatesExportApi(ExportApi):
    """The latest estimates: JSON as /estimates/ (the metrics_core ``estimate`` output plus ids
    and counts), CSV one row per metric and estimator (``human_only``, then ``model_assisted``
    with the score's ``lambda`` and ``verdicts_saved`` when the experiment has them). DeltaRecall
    and IQ join the metrics (and the model-assisted ones those of ``model_assisted``), as in the
    ``estimate`` command's output, when the derived metrics were computed from the same
    verdicts as the estimates (they follow them by a few seconds while rating goes on), with the
    Recall_Base range they assume and that assumption in words.
    Roles: engineer (own or granted), admin."""

    export_name = "estimates"
    csv_fields = ESTIMATE_FIELDS

    @export_schema(EstimateSnapshotSerializer)
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        snapshot = estimate_snapshot_latest(experiment=experiment)
        if snapshot is None:
            raise NotFound("No estimates yet.")
        body = EstimateSnapshotSerializer(snapshot).data
        derived = derived_latest(experiment=experiment)
        if derived is not None and derived.judgements == snapshot.judgements:
            assumption = recall_base_assumption(derived.payload)
            for part, stored in (
                (body, derived.payload),
                (body.get("model_assisted"), derived.payload.get("model_assisted")),
            ):
                if part and stored:  # the model-assisted ones beside the model-assisted estimates, as the CLI's
                    part["estimates"] = part["estimates"] | {
                        name: {**stored["estimates"][name], "assumption": assumption} for name in DERIVED_METRICS
                    }
        if request.accepted_renderer.format == "csv":
            rows = [
                {"metric": name, "estimator": estimator, **values}
                for estimator, part in (("human_only", body), ("model_assisted", body.get("model_assisted") or {}))
                for name, values in (part.get("estimates") or {}).items()
            ]
            return Response(EstimateRowSerializer(rows, many=True).data)
        return Response(body)
