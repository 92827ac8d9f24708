"""Request and response shapes of the pair explorer (``raterapp/api/explorer.py``).

Names start with ``Explorer``: serializer names are the OpenAPI component names.
"""

from __future__ import annotations

from rest_framework import serializers

from metrics_core import PAIR_CLASSES
from raterapp.models import Verdict
from raterapp.selectors.explorer import CLUSTER_SIDES, MEMBERS_SHOWN, ORDERINGS, VERDICT_SUMMARIES, PairFilters


class ExplorerPairsQuerySerializer(serializers.Serializer):
    """The filters and the order of the pair list (query parameters)."""

    pair_class = serializers.ChoiceField(choices=PAIR_CLASSES, required=False, help_text="Only pairs of this class.")
    verdict = serializers.ChoiceField(
        choices=VERDICT_SUMMARIES, required=False, help_text="Only pairs with this verdict summary."
    )
    attribute = serializers.CharField(
        required=False, max_length=200, help_text="Slice: an attribute of the vantage item (with value)."
    )
    value = serializers.CharField(
        required=False, allow_blank=True, max_length=1000, help_text="Slice: the attribute's value ('' = missing)."
    )
    cluster = serializers.CharField(
        required=False, max_length=255, help_text="Only pairs with an item in this Base or Exp cluster."
    )
    side = serializers.ChoiceField(
        choices=CLUSTER_SIDES, required=False, help_text="With cluster: only Base or only Exp labels."
    )
    q = serializers.CharField(
        required=False, max_length=200, help_text="Substring (any case) of either item's id or title."
    )
    include_self = serializers.BooleanField(
        required=False, default=False, help_text="Also list self pairs (left out by default; never judged)."
    )
    ordering = serializers.ChoiceField(choices=ORDERINGS, required=False, default="-jaccard_contribution")

    def validate(self, attrs):
        if "value" in attrs and "attribute" not in attrs:
            raise serializers.ValidationError({"attribute": "Give the attribute whose value to match."})
        if "attribute" in attrs and "value" not in attrs:
            raise serializers.ValidationError({"value": "Give the value to match ('' for items without it)."})
        if "side" in attrs and "cluster" not in attrs:
            raise serializers.ValidationError({"cluster": "Give the cluster label that side refers to."})
        return attrs

    def filters(self) -> PairFilters:
        data = self.validated_data
        return PairFilters(**{name: data.get(name) for name in PairFilters.__dataclass_fields__ if name in data})


class ExplorerPairSerializer(serializers.Serializer):
    """A sampled pair as the explorer lists it (and as the CSV download has it)."""

    id = serializers.IntegerField(help_text="The sampled pair's id (for .../explorer/pairs/<id>/).")
    i = serializers.CharField(help_text="Item id of the vantage item.")
    j = serializers.CharField(help_text="Item id of the partner.")
    i_title = serializers.CharField(allow_blank=True)
    j_title = serializers.CharField(allow_blank=True)
    pair_class = serializers.CharField(help_text="split, merge, intersection or self.")
    stratum = serializers.CharField(help_text="all, or diff/stable for the stratified scheme.")
    draws = serializers.IntegerField()
    jaccard_contribution = serializers.FloatField(help_text="Share of JaccardDistance this row stands for (JDD §4.5).")
    task = serializers.IntegerField(allow_null=True, help_text="The judging task; null for self pairs.")
    equivalent = serializers.IntegerField(help_text="Verdicts 'equivalent'.")
    not_equivalent = serializers.IntegerField(help_text="Verdicts 'not equivalent'.")
    unsure = serializers.IntegerField(help_text="Verdicts 'unsure'.")
    wanted = serializers.IntegerField(allow_null=True, help_text="Verdicts wanted; null for self pairs.")
    agreement = serializers.FloatField(
        allow_null=True, help_text="Share of the majority verdict among the pair's verdicts; null without verdicts."
    )
    # Text, not an enum: "verdict" already names the enum of a single verdict in the schema.
    verdict = serializers.CharField(
        help_text=f"The verdict summary, one of {', '.join(VERDICT_SUMMARIES)}: unjudged without verdicts; the "
        "verdict all its verdicts agree on; mixed when they differ; self for self pairs."
    )
    score = serializers.FloatField(
        allow_null=True,
        help_text="The pair's score (higher: more likely equivalent), which model-assisted estimates use; "
        "null until scored. Never shown to raters.",
    )
    score_source = serializers.CharField(
        allow_null=True, help_text="built_in (the card similarity) or uploaded (the team's own scores); null unscored."
    )


class ExplorerClusterMemberSerializer(serializers.Serializer):
    item_id = serializers.CharField()
    title = serializers.CharField(allow_null=True, help_text="Null when the item is not in any sampled pair.")
    shared = serializers.BooleanField(help_text="Also in the item's cluster of the other clustering.")


class ExplorerClusterSerializer(serializers.Serializer):
    side = serializers.ChoiceField(choices=CLUSTER_SIDES)
    label = serializers.CharField()  # type: ignore[assignment]  # a field named label: the stubs see Serializer's own Field.label
    items = serializers.IntegerField(allow_null=True, help_text="Items in the cluster (null: not known here).")
    weight = serializers.FloatField(allow_null=True)
    complete = serializers.BooleanField(
        help_text="False for experiments prepared on Dask: only the sampled members are known, and the size "
        "only when the cluster is among the stored impact rows."
    )
    members = ExplorerClusterMemberSerializer(
        many=True, help_text=f"The item itself, then up to {MEMBERS_SHOWN - 1} others in population order."
    )


class ExplorerItemSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["vantage", "partner"], help_text="vantage is i, partner is j.")
    item_id = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)
    image_url = serializers.CharField(allow_blank=True)
    url = serializers.CharField(allow_blank=True)
    attributes = serializers.DictField()
    weight = serializers.FloatField()
    base_cluster = ExplorerClusterSerializer()
    exp_cluster = ExplorerClusterSerializer()


class ExplorerVerdictSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    rater = serializers.CharField(help_text="The rater's user name.")
    comment = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    source_experiment = serializers.IntegerField(
        allow_null=True, help_text="The experiment whose verdict this is, when reused; null for its own."
    )


class ExplorerPairDetailSerializer(serializers.Serializer):
    pair = ExplorerPairSerializer()
    items = ExplorerItemSerializer(many=True, help_text="The vantage item (i), then the partner (j).")
    verdicts = ExplorerVerdictSerializer(many=True, help_text="Oldest first; empty for self pairs.")


class ExplorerClustersQuerySerializer(serializers.Serializer):
    side = serializers.ChoiceField(choices=CLUSTER_SIDES, required=False, default="base")
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=100)


class ExplorerClusterImpactSerializer(serializers.Serializer):
    label = serializers.CharField()  # type: ignore[assignment]  # a field named label: the stubs see Serializer's own Field.label
    items = serializers.IntegerField()
    affected_items = serializers.IntegerField()
    weight = serializers.FloatField()
    JaccardDistance = serializers.FloatField(allow_null=True)
    SplitDistance = serializers.FloatField(allow_null=True)
    MergeDistance = serializers.FloatField(allow_null=True)
    contribution = serializers.FloatField(
        help_text="The cluster's share of the overall JaccardDistance: JaccardDistance · weight / total weight."
    )


class ExplorerClustersSerializer(serializers.Serializer):
    side = serializers.ChoiceField(choices=CLUSTER_SIDES)
    jaccard_distance = serializers.FloatField(allow_null=True, help_text="The overall JaccardDistance.")
    clusters = ExplorerClusterImpactSerializer(many=True, help_text="Largest contribution first.")
