"""The engineer's dashboard as an API: every number of the experiment page, its convergence
history and its slices (what the owner changes: experiment_control.py).

Roles: engineers read the experiments they own or were granted, admins all; only the owner
or an admin changes them (403 for a granted engineer, nothing changed); raters 403, anonymous
users 401; an experiment that is not visible 404.

Live pages poll ``dashboard/`` with ``If-None-Match``: while no new snapshot was stored and
the experiment did not change, the answer is an empty 304 after one indexed query.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils.cache import patch_cache_control
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_engineer
from raterapp.selectors.convergence import estimate_convergence_get
from raterapp.selectors.dashboard import dashboard_version_get, experiment_dashboard_get
from raterapp.selectors.derived import derived_latest
from raterapp.selectors.slices import UnknownAttribute, experiment_slices_get, slice_attributes_list

from .common import (
    EXPERIMENT_NOT_FOUND,
    FORMAT,
    ExperimentReadApi,
    ExportApi,
    IsEngineerOrAdmin,
    download_responses,
    read_schema,
)


class ExperimentDashboardApi(APIView):
    """Every number of the experiment page: status badge with its reasons, exact impact,
    estimates with intervals and readings, the expected situation of an affected item,
    progress to the precision target, rater agreement. ETag/If-None-Match give 304 while
    nothing changed. Roles: engineer (own or granted), admin."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 304: None, 404: EXPERIMENT_NOT_FOUND})
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        etag = f'"{dashboard_version_get(experiment=experiment)}"'
        if etag in (request.headers.get("If-None-Match") or ""):
            response = Response(status=status.HTTP_304_NOT_MODIFIED)
        else:
            response = Response(experiment_dashboard_get(experiment=experiment))
        response["ETag"] = etag
        patch_cache_control(response, private=True, no_cache=True)
        return response


class ExperimentDerivedApi(ExperimentReadApi):
    """The latest ΔRecall and IQ with bootstrap intervals, the diagram they come from (variant,
    clips, checks), the Recall_Base curve, the heat map, with a ground-truth clustering the
    calibration against the truth, and with pair scores the model-assisted ΔRecall and IQ
    (``model_assisted``, as ``estimate --scores`` gives them; 404 until first computed; it follows
    the estimates by a few seconds). Roles: engineer (own or granted), admin."""

    missing = "No derived metrics yet."

    def read(self, *, experiment):
        derived = derived_latest(experiment=experiment)
        if derived is None:
            return None
        return {
            "id": derived.pk,
            "experiment": experiment.pk,
            "created_at": derived.created_at.isoformat(),
            "judgements": derived.judgements,
            "seconds": derived.seconds,
            **derived.payload,
        }

    @read_schema(OpenApiTypes.OBJECT)
    def get(self, request, experiment_id: int):
        return self.answer(request, experiment_id)


class ExperimentConvergenceApi(ExportApi):
    """Each estimate and its interval against the number of verdicts, from the stored
    snapshots (at most ``points``, evenly spread). CSV: one row per snapshot and metric.
    Roles: engineer (own or granted), admin."""

    export_name = "convergence"
    csv_fields = ("snapshot", "created_at", "judgements", "metric", "value", "ci_low", "ci_high", "cs_low", "cs_high")

    @extend_schema(
        parameters=[FORMAT, OpenApiParameter("points", int, description="At most this many snapshots (2-1000).")],
        responses=download_responses(OpenApiTypes.OBJECT),
    )
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        try:
            points = min(max(int(request.query_params.get("points", 200)), 2), 1000)
        except ValueError:
            raise ValidationError({"points": "Give a whole number."}) from None
        body = estimate_convergence_get(experiment=experiment, max_points=points)
        if request.accepted_renderer.format == "csv":
            return Response(
                [
                    {k: point[k] for k in ("snapshot", "created_at", "judgements")} | {"metric": name, **values}
                    for point in body["points"]
                    for name, values in point["estimates"].items()
                ]
            )
        return Response(body)


class ExperimentSlicesApi(ExportApi):
    """Without ``attribute``: the attributes the experiment can be sliced by. With it: each
    value's exact impact metrics and, for the heaviest values, the quality estimates of the
    slice (``metric``) and its contribution to the overall metric (``contribution``), with
    intervals. CSV: one row per value, metrics flattened. Roles: engineer (own or granted), admin."""

    export_name = "slices"
    csv_fields = None  # the columns depend on the scheme

    @extend_schema(
        parameters=[FORMAT, OpenApiParameter("attribute", str, description="The item attribute to slice by.")],
        responses=download_responses(OpenApiTypes.OBJECT),
    )
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        attribute = request.query_params.get("attribute")
        if not attribute:
            return Response({"attributes": slice_attributes_list(experiment=experiment)})
        try:
            body = experiment_slices_get(experiment=experiment, attribute=attribute)
        except UnknownAttribute:
            raise NotFound(f"The experiment has no slices by {attribute!r}.") from None
        if request.accepted_renderer.format == "csv":
            return Response([_flat_slice_row(row) for row in body["rows"]])
        return Response(body)


def _flat_slice_row(row: dict) -> dict:
    flat = {key: row[key] for key in ("label", "items", "affected_items", "weight", "weight_fraction")}
    flat |= {f"impact_{name}": value for name, value in (row["impact"] or {}).items()}
    for kind in ("metric", "contribution"):
        for name, estimate in (row[kind] or {}).items():
            prefix = name if kind == "metric" else f"{name}_contribution"
            flat |= {prefix: estimate["value"], f"{prefix}_ci_low": estimate["ci_low"]}
            flat[f"{prefix}_ci_high"] = estimate["ci_high"]
    return flat
