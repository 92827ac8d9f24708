"""The pair explorer: from the dashboard's numbers down to the sampled pairs behind them.

- ``GET .../explorer/pairs/``: the sampled pairs with titles, contribution to JaccardDistance,
  verdict counts and summary; filtered (``pair_class``, ``verdict``, ``attribute`` + ``value``,
  ``cluster`` [+ ``side``], ``q``, ``include_self``) and ordered (``ordering``), paginated
  (``limit``/``offset``). With ``?format=csv`` or ``?format=json`` (or ``Accept: text/csv``) it
  is a download of every pair that passes the filters, unpaginated. Self pairs are left out
  unless ``include_self=true`` (or ``pair_class=self`` or ``verdict=self``).
- ``GET .../explorer/pairs/<id>/``: one pair, both items' cards, each item's Base and Exp
  cluster with its first members, and the pair's verdicts with their raters.
- ``GET .../explorer/clusters/?side=base|exp&limit=10``: the clusters with the largest share of
  the overall JaccardDistance.

Roles: engineer (own or granted experiments), admin; raters 403, anonymous users 401; an
experiment (or pair) that is not visible 404. Cluster membership is shown to engineers only.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_engineer, access_sampled_pair_for_engineer
from raterapp.api.serializers.explorer import (
    ExplorerClustersQuerySerializer,
    ExplorerClustersSerializer,
    ExplorerPairDetailSerializer,
    ExplorerPairSerializer,
    ExplorerPairsQuerySerializer,
)
from raterapp.models import SampledPair
from raterapp.selectors.explorer import (
    EXPLORER_PAIR_FIELDS,
    explorer_clusters_list,
    explorer_pairs_list,
)
from raterapp.selectors.explorer_pair import explorer_pair_get

from .common import ExperimentRowsApi, ExportApi, IsEngineerOrAdmin, not_found, validated

NOT_FOUND = not_found("experiment (or pair)")
BAD_QUERY = OpenApiResponse(description="A query parameter is not valid (keyed by parameter).")
FORMAT = OpenApiParameter(
    "format", str, enum=["json", "csv"], description="A download of every matching pair (no pagination)."
)


@extend_schema(
    parameters=[ExplorerPairsQuerySerializer, FORMAT],
    responses={
        (200, "application/json"): ExplorerPairSerializer(many=True),
        (200, "text/csv"): OpenApiTypes.STR,
        400: BAD_QUERY,
        404: NOT_FOUND,
    },
)
class ExplorerPairsApi(ExportApi, ExperimentRowsApi):
    """The sampled pairs with their contribution to JaccardDistance and their verdicts,
    filtered and ordered; paginated, or a CSV/JSON download of all of them with ``format``.
    Roles: engineer (own or granted), admin."""

    serializer_class = ExplorerPairSerializer
    queryset = SampledPair.objects.none()  # rows come from the selector
    export_name = "explorer-pairs"
    csv_fields = EXPLORER_PAIR_FIELDS

    def get(self, request, experiment_id: int):
        return self.list(request)

    def rows(self, *, experiment):
        query = ExplorerPairsQuerySerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return explorer_pairs_list(
            experiment=experiment, filters=query.filters(), ordering=query.validated_data["ordering"]
        )

    def paginate_queryset(self, queryset):
        return None if self._is_download() else super().paginate_queryset(queryset)

    def finalize_response(self, request, response, *args, **kwargs):
        if self._is_download():
            return super().finalize_response(request, response, *args, **kwargs)  # named attachment
        return APIView.finalize_response(self, request, response, *args, **kwargs)

    def _is_download(self) -> bool:
        renderer = getattr(self.request, "accepted_renderer", None)
        return "format" in self.request.query_params or getattr(renderer, "format", None) == "csv"


class ExplorerPairDetailApi(APIView):
    """One sampled pair: both items' cards, each item's Base and Exp cluster (size, weight, up
    to 50 members, marked when they are in the item's cluster of the other clustering too) and
    the pair's verdicts. Roles: engineer (own or granted), admin."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(responses={200: ExplorerPairDetailSerializer, 404: NOT_FOUND})
    def get(self, request, experiment_id: int, sampled_pair_id: int):
        pair = access_sampled_pair_for_engineer(request.user, experiment_id, sampled_pair_id)
        return Response(ExplorerPairDetailSerializer(explorer_pair_get(experiment=pair.experiment, pair=pair)).data)


class ExplorerClustersApi(APIView):
    """The Base or Exp clusters with the largest share of the overall JaccardDistance
    (JaccardDistance · weight / total weight), largest first. Roles: engineer (own or granted), admin."""

    permission_classes = [IsEngineerOrAdmin]

    @extend_schema(
        parameters=[ExplorerClustersQuerySerializer],
        responses={200: ExplorerClustersSerializer, 400: BAD_QUERY, 404: NOT_FOUND},
    )
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        body = explorer_clusters_list(
            experiment=experiment, **validated(ExplorerClustersQuerySerializer, request.query_params)
        )
        return Response(ExplorerClustersSerializer(body).data)
