"""The pair explorer API: filters, ordering, contributions, verdict summaries, pagination, the
CSV download, one pair with its clusters, and the clusters that carry the change."""

from __future__ import annotations

import csv
import io
import uuid

import numpy as np
import pytest

from metrics_core import jaccard_contributions
from raterapp.models import ImpactGroup, Item, PairTask, SampledPair
from raterapp.population_files import population_for_experiment
from raterapp.selectors.explorer import EXPLORER_PAIR_FIELDS
from raterapp.selectors.samples import judged_sample_get
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.preparation.impact_groups import impact_groups_build
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import BASE, EXP, experiment_prepared

# Verdicts of three raters on the tasks of ranks 0-3, the summary and the agreement each pair gets.
PLAN = {
    0: (("equivalent", "equivalent", "equivalent"), "equivalent", 1.0),
    1: (("not_equivalent", "equivalent", "equivalent"), "mixed", 2 / 3),
    2: (("unsure", "unsure", "unsure"), "unsure", 1.0),
    3: (("not_equivalent", "not_equivalent", "not_equivalent"), "not_equivalent", 1.0),
}
FORMULA = "=HYPERLINK(\"http://evil.example\",\"x\")"


def get_pairs(client, experiment, **params):
    response = client.get(f"/api/experiments/{experiment.pk}/explorer/pairs/", {"limit": 1000, **params})
    assert response.status_code == 200, response.content[:300]
    return response.json()


def ids_of(body):
    return [row["id"] for row in body["results"]]


def non_self(experiment):
    return SampledPair.objects.filter(experiment=experiment).exclude(pair_class="self")


@pytest.fixture
def judged(people):
    """Replication 3; three raters judge the tasks of ranks 0-3 as PLAN says; item 0's title is a
    formula and item 5's has capitals."""
    experiment = experiment_prepared(owner=people["owner"], replication=3)
    Item.objects.filter(experiment=experiment, position=0).update(title=FORMULA)
    Item.objects.filter(experiment=experiment, position=5).update(title="Jane SMITH")
    raters = [UserFactory(roles=["rater"], username=f"rater-{k}") for k in range(3)]
    for k, rater in enumerate(raters):
        for rank, (verdicts, _, _) in PLAN.items():
            task = assignment_next(experiment=experiment, rater=rater)
            assert task.rank == rank
            judgement_submit(task=task, rater=rater, verdict=verdicts[k], client_id=uuid.uuid4(), comment=f"c{k}{rank}")
    return experiment


def expected_contributions(experiment):
    _, population = population_for_experiment(experiment)
    values = jaccard_contributions(population, judged_sample_get(experiment=experiment).sample)
    pks = SampledPair.objects.filter(experiment=experiment).order_by("pk").values_list("pk", flat=True)
    return dict(zip(pks, values.tolist(), strict=True))


# ---------------------------------------------------------------------------- the list


def test_the_list_has_every_non_self_pair_with_its_row_fields(client_of, judged):
    body = get_pairs(client_of("owner"), judged)
    pairs = {p.pk: p for p in non_self(judged).select_related("vantage", "partner", "task")}
    assert body["count"] == len(pairs) == len(body["results"]) > 20
    for row in body["results"]:
        pair = pairs[row["id"]]
        assert list(row) == list(EXPLORER_PAIR_FIELDS)
        assert (row["i"], row["j"]) == (pair.vantage.item_id, pair.partner.item_id)
        assert (row["i_title"], row["j_title"]) == (pair.vantage.title, pair.partner.title)
        assert (row["pair_class"], row["stratum"], row["draws"]) == (pair.pair_class, pair.stratum, pair.draws)
        assert (row["task"], row["wanted"]) == (pair.task_id, 3)


def test_each_contribution_is_metrics_core_jaccard_contribution_of_its_row(client_of, judged):
    expected = expected_contributions(judged)
    body = get_pairs(client_of("owner"), judged, include_self="true")
    assert {row["id"]: row["jaccard_contribution"] for row in body["results"]} == expected
    assert sum(expected.values()) == pytest.approx(judged.impact["metrics"]["JaccardDistance"], rel=1e-12)
    intersection = [row for row in body["results"] if row["pair_class"] in ("intersection", "self")]
    assert intersection and all(row["jaccard_contribution"] == 0.0 for row in intersection)


def test_verdict_counts_agreement_and_summary(client_of, judged):
    rows = {row["task"]: row for row in get_pairs(client_of("owner"), judged)["results"]}
    for rank, (given, summary, agreement) in PLAN.items():
        task = PairTask.objects.get(experiment=judged, rank=rank, gold_answer="")
        row = rows[task.pk]
        assert row["verdict"] == summary
        assert row["agreement"] == agreement
        assert (row["equivalent"], row["not_equivalent"], row["unsure"]) == (
            given.count("equivalent"), given.count("not_equivalent"), given.count("unsure"),
        )
    judged_tasks = set(PairTask.objects.filter(experiment=judged, rank__in=PLAN).values_list("pk", flat=True))
    for task, row in rows.items():
        if task not in judged_tasks:
            assert (row["verdict"], row["agreement"], row["equivalent"] + row["not_equivalent"] + row["unsure"]) == (
                "unjudged", None, 0,
            )


def test_self_pairs_are_left_out_unless_asked_for(client_of, judged):
    client = client_of("owner")
    selves = set(SampledPair.objects.filter(experiment=judged, pair_class="self").values_list("pk", flat=True))
    assert selves
    default = set(ids_of(get_pairs(client, judged)))
    everything = get_pairs(client, judged, include_self="true")
    assert not default & selves
    assert set(ids_of(everything)) == default | selves
    assert sum(row["draws"] for row in everything["results"]) == judged.n_draws  # the draws add up
    only = get_pairs(client, judged, pair_class="self")
    assert set(ids_of(only)) == selves
    assert set(ids_of(get_pairs(client, judged, verdict="self"))) == selves
    for row in only["results"]:
        assert (row["task"], row["wanted"], row["verdict"], row["agreement"]) == (None, None, "self", None)


@pytest.mark.parametrize("pair_class", ["split", "merge", "intersection"])
def test_filter_by_class(client_of, judged, pair_class):
    body = get_pairs(client_of("owner"), judged, pair_class=pair_class)
    expected = set(SampledPair.objects.filter(experiment=judged, pair_class=pair_class).values_list("pk", flat=True))
    assert expected
    assert set(ids_of(body)) == expected


@pytest.mark.parametrize("verdict", ["equivalent", "not_equivalent", "unsure", "mixed", "unjudged"])
def test_filter_by_verdict(client_of, judged, verdict):
    ranks = [rank for rank, plan in PLAN.items() if plan[1] == verdict]
    pairs = non_self(judged)
    if ranks:
        expected = set(pairs.filter(task__rank__in=ranks).values_list("pk", flat=True))
    else:
        expected = set(pairs.exclude(task__rank__in=PLAN).values_list("pk", flat=True))
    assert expected
    body = get_pairs(client_of("owner"), judged, verdict=verdict)
    assert set(ids_of(body)) == expected
    assert {row["verdict"] for row in body["results"]} == {verdict}


def test_filter_by_slice_of_the_vantage_item(client_of, judged):
    client = client_of("owner")
    red = get_pairs(client, judged, attribute="colour", value="red")
    blue = get_pairs(client, judged, attribute="colour", value="blue")
    pairs = non_self(judged)
    assert set(ids_of(red)) == set(pairs.filter(vantage__position__in=[1, 3, 5, 7, 9, 11]).values_list("pk", flat=True))
    assert set(ids_of(blue)) == set(pairs.filter(vantage__position__in=[0, 2, 4, 6, 8, 10]).values_list("pk", flat=True))
    assert red["count"] + blue["count"] == pairs.count()
    assert get_pairs(client, judged, attribute="colour", value="green")["count"] == 0
    # '' matches items without the attribute: none here, every item has a colour
    assert get_pairs(client, judged, attribute="colour", value="")["count"] == 0
    assert get_pairs(client, judged, attribute="size", value="")["count"] == pairs.count()


@pytest.mark.parametrize(
    "params, base_or_exp",
    [
        ({"cluster": "b1"}, [("base", "b1")]),
        ({"cluster": "e2", "side": "exp"}, [("exp", "e2")]),
        ({"cluster": "e2", "side": "base"}, []),  # no Base cluster has that label
        ({"cluster": "e0"}, [("exp", "e0")]),
    ],
)
def test_filter_by_cluster_of_either_item(client_of, judged, params, base_or_exp):
    expected = set()
    for pair in non_self(judged).select_related("vantage", "partner"):
        for side, label in base_or_exp:
            if label in (getattr(pair.vantage, f"{side}_cluster"), getattr(pair.partner, f"{side}_cluster")):
                expected.add(pair.pk)
    body = get_pairs(client_of("owner"), judged, **params)
    assert set(ids_of(body)) == expected
    if base_or_exp:
        assert expected


def test_search_matches_ids_and_titles_in_any_case(client_of, judged):
    client = client_of("owner")
    with_five = set(
        non_self(judged).filter(vantage__position=5).values_list("pk", flat=True)
    ) | set(non_self(judged).filter(partner__position=5).values_list("pk", flat=True))
    assert with_five
    assert set(ids_of(get_pairs(client, judged, q="smith"))) == with_five
    assert set(ids_of(get_pairs(client, judged, q="ITEM-005"))) == with_five
    assert get_pairs(client, judged, q="nobody by that name")["count"] == 0


@pytest.mark.parametrize(
    "ordering, key",
    [
        (None, lambda r: (-r["jaccard_contribution"], r["id"])),
        ("-jaccard_contribution", lambda r: (-r["jaccard_contribution"], r["id"])),
        ("jaccard_contribution", lambda r: (r["jaccard_contribution"], r["id"])),
        ("-draws", lambda r: (-r["draws"], r["id"])),
        ("draws", lambda r: (r["draws"], r["id"])),
        ("-score", lambda r: (-r["score"], r["id"])),
        ("score", lambda r: (r["score"], r["id"])),
        ("pair_class", lambda r: (["split", "merge", "intersection"].index(r["pair_class"]), -r["jaccard_contribution"], r["id"])),
    ],
)
def test_ordering(client_of, judged, ordering, key):
    params = {"ordering": ordering} if ordering else {}
    rows = get_pairs(client_of("owner"), judged, **params)["results"]
    assert len({row["draws"] for row in rows}) > 1  # the order is not trivial
    assert [row["id"] for row in rows] == [row["id"] for row in sorted(rows, key=key)]


def test_each_row_carries_its_stored_score_beside_the_verdicts(client_of, judged):
    """Scores are data of the experiment (abcde-spec §15): the explorer shows each pair's, with its
    source; a pair without one (stored before scores) sorts last either way."""
    stored = dict(non_self(judged).values_list("pk", "score"))
    assert len(set(stored.values())) > 5 and None not in stored.values()  # the worker scored every pair
    SampledPair.objects.filter(pk=min(stored)).update(score_source="uploaded")
    rows = get_pairs(client_of("owner"), judged)["results"]
    assert {row["id"]: row["score"] for row in rows} == stored
    assert {row["id"]: row["score_source"] for row in rows} == {
        pk: ("uploaded" if pk == min(stored) else "built_in") for pk in stored
    }
    SampledPair.objects.filter(pk=max(stored)).update(score=None, score_source="")
    for ordering in ("-score", "score"):
        rows = get_pairs(client_of("owner"), judged, ordering=ordering)["results"]
        assert (rows[-1]["id"], rows[-1]["score"], rows[-1]["score_source"]) == (max(stored), None, None)
        assert all(row["score"] is not None for row in rows[:-1])


def test_pagination_is_limit_offset_like_the_other_lists(client_of, judged):
    client = client_of("owner")
    everything = ids_of(get_pairs(client, judged))
    url = f"/api/experiments/{judged.pk}/explorer/pairs/"
    page = client.get(url, {"limit": 5, "offset": 5, "pair_class": "split"}).json()
    splits = ids_of(get_pairs(client, judged, pair_class="split"))
    assert page["count"] == len(splits)
    assert ids_of(page) == splits[5:10]
    assert "offset=10" in page["next"] and "pair_class=split" in page["next"]
    assert "offset" not in page["previous"] and "pair_class=split" in page["previous"]
    default = client.get(url).json()
    assert ids_of(default) == everything[:100]  # PAGE_SIZE of the DRF settings


@pytest.mark.parametrize(
    "params, field",
    [
        ({"pair_class": "twins"}, "pair_class"),
        ({"verdict": "maybe"}, "verdict"),
        ({"ordering": "title"}, "ordering"),
        ({"side": "base"}, "cluster"),
        ({"attribute": "colour"}, "value"),
        ({"value": "red"}, "attribute"),
    ],
)
def test_bad_query_parameters_are_400_naming_them(client_of, judged, params, field):
    response = client_of("owner").get(f"/api/experiments/{judged.pk}/explorer/pairs/", params)
    assert response.status_code == 400
    assert list(response.json()) == [field]


def test_csv_download_has_every_matching_pair_with_formula_safe_titles(client_of, judged):
    client = client_of("owner")
    url = f"/api/experiments/{judged.pk}/explorer/pairs/"
    response = client.get(url, {"format": "csv", "q": "item-000", "ordering": "-draws"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="experiment-{judged.pk}-explorer-pairs.csv"'
    text = response.content.decode()
    assert text.splitlines()[0] == ",".join(EXPLORER_PAIR_FIELDS)
    rows = list(csv.DictReader(io.StringIO(text)))
    expected = get_pairs(client, judged, q="item-000", ordering="-draws")["results"]
    assert [int(row["id"]) for row in rows] == [row["id"] for row in expected]
    assert len(rows) > 1
    for row, json_row in zip(rows, expected, strict=True):
        for side in ("i", "j"):
            assert row[side] == json_row[side]  # ids stay exact
            title = json_row[f"{side}_title"]
            assert row[f"{side}_title"] == ("'" + title if title == FORMULA else title)
    assert any(FORMULA in (r["i_title"], r["j_title"]) for r in expected)
    assert any("'" + FORMULA in (r["i_title"], r["j_title"]) for r in rows)


def test_downloads_are_not_paginated_and_json_keeps_titles_as_they_are(client_of, people):
    experiment = experiment_prepared(owner=people["owner"], base=[0] * 40, exp=[0] * 20 + [1] * 20, n_draws=2000)
    Item.objects.filter(experiment=experiment, position=0).update(title=FORMULA)
    client = client_of("owner")
    total = non_self(experiment).count()
    assert total > 100  # more than one page
    url = f"/api/experiments/{experiment.pk}/explorer/pairs/"
    as_json = client.get(url, {"format": "json"})
    assert as_json["Content-Disposition"] == f'attachment; filename="experiment-{experiment.pk}-explorer-pairs.json"'
    rows = as_json.json()
    assert isinstance(rows, list) and len(rows) == total
    assert any(row["i_title"] == FORMULA for row in rows)
    assert len(list(csv.DictReader(io.StringIO(client.get(url, {"format": "csv"}).content.decode())))) == total
    assert "Content-Disposition" not in client.get(url)  # the paginated list is no download


def test_an_experiment_without_a_sample_lists_nothing(client_of, people):
    from tests.raterapp.factories import ExperimentFactory

    experiment = ExperimentFactory(owner=people["owner"])
    body = client_of("owner").get(f"/api/experiments/{experiment.pk}/explorer/pairs/").json()
    assert (body["count"], body["results"]) == (0, [])
    clusters = client_of("owner").get(f"/api/experiments/{experiment.pk}/explorer/clusters/").json()
    assert clusters == {"side": "base", "jaccard_distance": None, "clusters": []}


# ---------------------------------------------------------------------------- one pair


def pair_url(experiment, pair):
    return f"/api/experiments/{experiment.pk}/explorer/pairs/{pair.pk}/"


def test_pair_detail_has_both_cards_clusters_from_the_population_and_verdicts(client_of, judged):
    task = PairTask.objects.get(experiment=judged, rank=1, gold_answer="")
    pair = SampledPair.objects.filter(experiment=judged, task=task).select_related("vantage", "partner").first()
    body = client_of("owner").get(pair_url(judged, pair)).json()
    assert body["pair"] == next(r for r in get_pairs(client_of("owner"), judged)["results"] if r["id"] == pair.pk)
    vantage, partner = body["items"]
    for shown, item, role in ((vantage, pair.vantage, "vantage"), (partner, pair.partner, "partner")):
        assert shown["role"] == role
        assert {k: shown[k] for k in ("item_id", "title", "description", "image_url", "url", "attributes", "weight")} == {
            "item_id": item.item_id, "title": item.title, "description": item.description, "image_url": item.image_url,
            "url": item.url, "attributes": item.attributes, "weight": 1.0,
        }
        p = item.position
        for side, labels, others in (("base", BASE, EXP), ("exp", EXP, BASE)):
            cluster = shown[f"{side}_cluster"]
            members = [k for k in range(12) if labels[k] == labels[p]]
            assert (cluster["side"], cluster["label"]) == (side, f"{side[0]}{labels[p]}")
            assert (cluster["items"], cluster["weight"]) == (len(members), float(len(members)))
            assert [m["item_id"] for m in cluster["members"]] == [f"item-{k:03d}" for k in [p] + [k for k in members if k != p]]
            assert [m["shared"] for m in cluster["members"]] == [others[k] == others[p] for k in [p] + [k for k in members if k != p]]
    titles = dict(Item.objects.filter(experiment=judged).values_list("item_id", "title"))
    assert all(m["title"] == titles[m["item_id"]] for m in vantage["base_cluster"]["members"])
    assert [(v["verdict"], v["rater"], v["comment"], v["source_experiment"]) for v in body["verdicts"]] == [
        ("not_equivalent", "rater-0", "c01", None), ("equivalent", "rater-1", "c11", None), ("equivalent", "rater-2", "c21", None),
    ]


def test_pair_detail_of_a_big_cluster_shows_fifty_members_and_untitled_ones_as_null(client_of, people):
    # One Base cluster of 300 items that Exp splits in three: only a few items are sampled.
    experiment = experiment_prepared(owner=people["owner"], base=[0] * 300, exp=[0] * 100 + [1] * 100 + [2] * 100, n_draws=5)
    pair = SampledPair.objects.filter(experiment=experiment).exclude(pair_class="self").select_related("vantage").first()
    body = client_of("owner").get(pair_url(experiment, pair)).json()
    base = body["items"][0]["base_cluster"]
    p = pair.vantage.position
    assert (base["label"], base["items"], base["weight"]) == ("b0", 300, 300.0)
    assert len(base["members"]) == 50
    assert base["members"][0]["item_id"] == pair.vantage.item_id
    expected = [p] + [k for k in range(300) if k != p][:49]
    assert [m["item_id"] for m in base["members"]] == [f"item-{k:03d}" for k in expected]
    assert [m["shared"] for m in base["members"]] == [k // 100 == p // 100 for k in expected]
    sampled = set(Item.objects.filter(experiment=experiment).values_list("item_id", flat=True))
    assert len(sampled) < 20
    for member in base["members"]:
        assert (member["title"] is None) == (member["item_id"] not in sampled)
    exp = body["items"][0]["exp_cluster"]
    assert (exp["label"], exp["items"]) == (f"e{p // 100}", 100)
    assert all(m["shared"] for m in exp["members"])  # every Exp member is in the Base cluster too


def test_a_self_pair_has_no_verdicts(client_of, judged):
    pair = SampledPair.objects.filter(experiment=judged, pair_class="self").first()
    body = client_of("owner").get(pair_url(judged, pair)).json()
    assert body["verdicts"] == []
    assert body["items"][0]["item_id"] == body["items"][1]["item_id"]
    assert (body["pair"]["verdict"], body["pair"]["task"]) == ("self", None)


def test_a_pair_of_another_experiment_is_404_like_a_missing_one(client_of, people, judged):
    other = experiment_prepared(owner=people["owner"], name="other")
    pair = SampledPair.objects.filter(experiment=other).first()
    client = client_of("owner")
    mixed = client.get(f"/api/experiments/{judged.pk}/explorer/pairs/{pair.pk}/")
    missing = client.get(f"/api/experiments/{judged.pk}/explorer/pairs/{pair.pk + 100000}/")
    assert mixed.status_code == missing.status_code == 404
    assert mixed.content == missing.content
    foreign = client_of("other").get(f"/api/experiments/{other.pk}/explorer/pairs/{pair.pk}/")
    assert foreign.status_code == 404


# ---------------------------------------------------------------------------- clusters


@pytest.fixture
def with_groups(judged):
    _, groups = impact_groups_build(experiment=judged, on_progress=lambda _: None)
    ImpactGroup.objects.bulk_create(groups)
    return judged


@pytest.mark.parametrize("side", ["base", "exp"])
def test_clusters_are_ranked_by_their_share_of_jaccard_distance(client_of, with_groups, side):
    experiment = with_groups
    body = client_of("owner").get(f"/api/experiments/{experiment.pk}/explorer/clusters/", {"side": side, "limit": 100}).json()
    overall = experiment.impact["metrics"]["JaccardDistance"]
    assert (body["side"], body["jaccard_distance"]) == (side, overall)
    groups = ImpactGroup.objects.filter(experiment=experiment, dimension=side)
    assert len(body["clusters"]) == groups.count() == 3
    for cluster in body["clusters"]:
        group = groups.get(label=cluster["label"])
        assert cluster["contribution"] == group.metrics["JaccardDistance"] * group.weight / 12.0
        assert (cluster["items"], cluster["affected_items"], cluster["weight"]) == (group.items, group.affected_items, group.weight)
        for name in ("JaccardDistance", "SplitDistance", "MergeDistance"):
            assert cluster[name] == group.metrics[name]
    shares = [c["contribution"] for c in body["clusters"]]
    assert shares == sorted(shares, reverse=True)
    assert sum(shares) == pytest.approx(overall, rel=1e-12)  # the clusters partition the items


def test_clusters_limit_and_default_side(client_of, with_groups):
    client = client_of("owner")
    url = f"/api/experiments/{with_groups.pk}/explorer/clusters/"
    full = client.get(url, {"side": "base"}).json()["clusters"]
    assert client.get(url).json()["clusters"] == full
    assert client.get(url, {"limit": 1}).json()["clusters"] == full[:1]
    # Base: b0 = {0..5} split 3/3 (JD 1/2 each), b1 = {6..9} and b2 = {10, 11} merged into e2 (JD 2/3, 1/3)
    assert [c["label"] for c in full] == ["b0", "b1", "b2"]
    assert np.allclose([c["contribution"] for c in full], [6 * 0.5 / 12, 4 * (2 / 6) / 12, 2 * (4 / 6) / 12])
    assert client.get(url, {"side": "sideways"}).status_code == 400
    assert client.get(url, {"limit": 0}).status_code == 400
