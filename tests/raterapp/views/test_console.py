"""The admin console's pages: the role table (GET and every POST action), each action through
its service with the result in the database, refused forms with the errors at the top and
beside the field, and a crawl of every link of the admin's and the engineer's navigation."""

from __future__ import annotations

import re
import uuid
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from raterapp.models import BudgetChange, BudgetPool, Experiment, ExperimentBudget, PairReport, PairTask
from raterapp.services.judging import assignment_next, judgement_submit, pair_report_create
from raterapp.services.judging.gold import gold_pair_create
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.django_db

PAGES = ["console-gold", "console-reports", "console-assignments", "console-pools", "console-audit"]
ROLE_TABLE = [
    ("anonymous", 302),
    ("nobody", 403),
    ("rater", 403),
    ("engineer", 403),
    ("admin", 200),
    ("superuser", 200),
]


@pytest.fixture
def experiment(users, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return experiment_prepared(owner=users["engineer"], name="Dedup v2")


@pytest.fixture
def report(experiment, users):
    task = assignment_next(experiment=experiment, rater=users["rater"])
    report, _ = pair_report_create(task=task, rater=users["rater"], reason="unreadable", note="garbled")
    return report


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize(("who", "status"), ROLE_TABLE)
def test_role_table_of_the_pages(sign_in, experiment, page, who, status):
    response = sign_in(who).get(reverse(page))
    assert response.status_code == status
    if status == 302:
        assert response["Location"] == f"/login/?next={reverse(page)}"
    elif status == 403:
        assert "This page is for admins" in response.content.decode()
        assert '<link rel="stylesheet"' in response.content.decode()  # the app's page, not a bare 403


def _posts(experiment, report, users):
    """Every action of the console, as (page, data): each one would change something."""
    task = PairTask.objects.filter(experiment=experiment, gold_answer="").first()
    gold = gold_pair_create(
        experiment=experiment,
        actor=users["admin"],
        item_a=task.item_a.item_id,
        item_b=task.item_b.item_id,
        answer="equivalent",
    )
    pool = BudgetPool.objects.create(name="pool", max_verdicts=10)
    second = UserFactory(username="second", roles=["rater"])
    e, g = experiment.pk, gold.pk
    return [
        ("console-gold", {"action": "add", "experiment": e, "gold-item_a": "item-000", "gold-item_b": "item-011", "gold-answer": "equivalent"}),
        ("console-gold", {"action": "rate", "experiment": e, "rate-gold_rate": "0.3"}),
        ("console-gold", {"action": "answer", "experiment": e, "task": g, f"t{g}-answer": "not_equivalent"}),
        ("console-gold", {"action": "retire", "experiment": e, "task": g}),
        ("console-reports", {"report": report.pk, f"r{report.pk}-resolution": "excluded", f"r{report.pk}-note": "x"}),
        ("console-assignments", {"action": "assign", "experiment": e, f"e{e}-raters": [users["rater"].pk, second.pk]}),
        ("console-assignments", {"action": "open_to_all", "experiment": e, "open_to_all": "false"}),
        ("console-assignments", {"action": "budget", "experiment": e, f"b{e}-max_verdicts": "250", f"b{e}-reason": "r"}),
        ("console-pools", {"action": "create", "pool-name": "new", "pool-max_verdicts": "5", "pool-reason": "r"}),
        ("console-pools", {"action": "attach", "pool": pool.pk, f"p{pool.pk}-experiment": e, f"p{pool.pk}-reason": "r"}),
        ("console-pools", {"action": "edit", "pool": pool.pk, f"edit{pool.pk}-name": "pool 2",
                           f"edit{pool.pk}-max_verdicts": "40", f"edit{pool.pk}-reason": "r"}),
    ]  # fmt: skip


def _state():
    return {
        "tasks": sorted(PairTask.objects.values_list("pk", "gold_answer", "retired_at")),
        "rates": sorted(Experiment.objects.values_list("pk", "gold_rate")),
        "reports": sorted(PairReport.objects.values_list("pk", "resolution")),
        "assigned": sorted(Experiment.assigned_raters.through.objects.values_list("experiment", "user")),
        "open_to_all": sorted(Experiment.objects.values_list("pk", "open_to_all_raters")),
        "pools": sorted(BudgetPool.objects.values_list("pk", "name", "max_verdicts")),
        "budgets": sorted(ExperimentBudget.objects.values_list("experiment", "pool", "max_verdicts")),
        "audit": BudgetChange.objects.count(),
    }


@pytest.mark.parametrize(("who", "status"), [("anonymous", 302), ("rater", 403), ("engineer", 403)])
def test_every_action_is_refused_to_others_and_changes_nothing(sign_in, experiment, report, users, who, status):
    posts = _posts(experiment, report, users)
    before = _state()
    client = sign_in(who)
    for page, data in posts:
        assert client.post(reverse(page), data).status_code == status, (page, data)
    assert _state() == before


def test_every_action_works_for_an_admin(sign_in, experiment, report, users):
    client = sign_in("admin")
    for page, data in _posts(experiment, report, users):
        response = client.post(reverse(page), data)
        assert response.status_code == 302, (page, data, response.content.decode()[:2000])
    gold = PairTask.objects.exclude(gold_answer="").order_by("pk")
    assert [(t.item_a.item_id, t.item_b.item_id, t.gold_answer, t.retired_at is None) for t in gold][1] == (
        "item-000",
        "item-011",
        "equivalent",
        True,
    )
    assert gold[0].gold_answer == "not_equivalent" and gold[0].retired_at is not None
    experiment.refresh_from_db()
    assert experiment.gold_rate == 0.3
    report.refresh_from_db()
    assert (report.resolution, report.resolved_by) == ("excluded", users["admin"])
    assert [u.username for u in experiment.assigned_raters.order_by("username")] == ["rater", "second"]
    assert not experiment.open_to_all_raters
    assert set(BudgetPool.objects.values_list("name", "max_verdicts")) == {("pool 2", 40), ("new", 5)}
    budget = ExperimentBudget.objects.get(experiment=experiment)
    assert (budget.pool.name, budget.max_verdicts) == ("pool 2", 250)
    assert set(BudgetChange.objects.values_list("field", "via")) == {
        ("name", "page"),
        ("max_verdicts", "page"),
        ("pool", "page"),
    }


def test_unassigning_the_last_rater_opens_the_experiment_to_all(sign_in, experiment, users):
    experiment.assigned_raters.add(users["rater"])
    e = experiment.pk
    response = sign_in("admin").post(
        reverse("console-assignments"), {"action": "unassign", "experiment": e, "rater": users["rater"].pk}
    )
    assert response.status_code == 302
    assert experiment.assigned_raters.count() == 0


def test_a_deactivated_rater_can_be_unassigned_but_not_assigned(sign_in, experiment, users):
    gone = UserFactory(username="gone", roles=["rater"], is_active=False)
    experiment.assigned_raters.add(users["rater"], gone)
    e, client = experiment.pk, sign_in("admin")
    refused = client.post(
        reverse("console-assignments"), {"action": "assign", "experiment": e, f"e{e}-raters": gone.pk}
    )
    assert refused.status_code == 400
    assert (
        f"#id_e{e}-raters",
        f"Raters: Select a valid choice. {gone.pk} is not one of the available choices.",
    ) in _summary(refused.content.decode())
    done = client.post(reverse("console-assignments"), {"action": "unassign", "experiment": e, "rater": gone.pk})
    assert done.status_code == 302
    assert list(experiment.assigned_raters.all()) == [users["rater"]]


def _summary(content: str) -> list[str]:
    box = re.search(r'<div class="alert alert--error error-summary"[^>]*data-error-summary.*?</div>', content, re.S)
    assert box, "no error summary"
    return re.findall(r'<li>(?:<a href="([^"]*)">)?([^<]*)', box.group(0))


def test_a_refused_pool_lists_its_errors_at_the_top_linked_to_the_fields(sign_in, experiment):
    BudgetPool.objects.create(name="Q3", max_verdicts=10)
    client = sign_in("admin")
    response = client.post(
        reverse("console-pools"), {"action": "create", "pool-name": "q3", "pool-max_verdicts": "-4", "pool-reason": ""}
    )
    assert response.status_code == 400
    content = response.content.decode()
    summary = _summary(content)
    assert [href for href, _ in summary] == ["#id_pool-max_verdicts", "#id_pool-reason"]
    assert content.index("data-error-summary") < content.index('id="new-pool"')
    assert 'id="id_pool-reason_errors"' in content  # beside the field too
    response = client.post(
        reverse("console-pools"), {"action": "create", "pool-name": "q3", "pool-max_verdicts": "4", "pool-reason": "r"}
    )
    assert _summary(response.content.decode()) == [("#id_pool-name", "Name: A pool with this name exists already.")]
    assert BudgetPool.objects.count() == 1 and BudgetChange.objects.count() == 0


def test_a_refused_budget_lists_its_errors_at_the_top_of_the_experiment_page(sign_in, experiment):
    response = sign_in("admin").post(
        reverse("experiment-budget", args=[experiment.pk]),
        {"max_verdicts": "-1", "replication": "1", "cost_per_verdict": "0", "reason": ""},
    )
    assert response.status_code == 400
    content = response.content.decode()
    assert [href for href, _ in _summary(content)] == ["#id_max_verdicts", "#id_reason"]
    assert content.index("data-error-summary") < content.index('id="budget"')
    assert "error_summary.js" in content
    assert BudgetChange.objects.count() == 0


def test_a_gold_pair_of_an_unknown_item_is_refused_beside_the_field(sign_in, experiment):
    e = experiment.pk
    response = sign_in("admin").post(
        reverse("console-gold"),
        {"action": "add", "experiment": e, "gold-item_a": "item-000", "gold-item_b": "nope", "gold-answer": ""},
    )
    assert response.status_code == 400
    summary = _summary(response.content.decode())
    assert ("#id_gold-answer_0", "Answer: This field is required.") in summary
    assert PairTask.objects.exclude(gold_answer="").count() == 0


def test_the_gold_page_shows_each_raters_gold_accuracy(sign_in, experiment, users):
    task = PairTask.objects.filter(experiment=experiment, gold_answer="").first()
    gold = gold_pair_create(
        experiment=experiment,
        actor=users["admin"],
        item_a=task.item_a.item_id,
        item_b=task.item_b.item_id,
        answer="equivalent",
    )
    experiment.gold_rate = 1.0
    experiment.save()
    served = assignment_next(experiment=experiment, rater=users["rater"])
    assert served.pk == gold.pk
    judgement_submit(task=served, rater=users["rater"], verdict="not_equivalent", client_id=uuid.uuid4())
    content = sign_in("admin").get(reverse("console-gold") + f"?experiment={experiment.pk}").content.decode()
    row = re.search(r'<tr data-accuracy="rater">(.*?)</tr>', content, re.S).group(1)
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["1", "0", "0"]
    assert "0.00" in row
    assert f'data-gold="{gold.pk}"' in content and "0 of 1" in content


# ---- the crawl -------------------------------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self, scope: str):
        super().__init__()
        self.scope, self.depth, self.links = scope, 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "nav" and (attrs.get("aria-label") in self.scope):
            self.depth += 1
        elif tag == "nav" and self.depth:
            self.depth += 1
        if tag == "a" and self.depth and attrs.get("href"):
            self.links.append(attrs["href"])

    def handle_endtag(self, tag):
        if tag == "nav" and self.depth:
            self.depth -= 1


def _nav_links(content: str) -> list[str]:
    parser = _Links(scope=("Main", "Admin console"))
    parser.feed(content)
    return parser.links


@pytest.mark.parametrize("who", ["admin", "engineer", "rater"])
def test_every_navigation_link_answers_200_for_the_role_that_sees_it(sign_in, experiment, report, users, who):
    if who == "admin":
        users["admin"].is_staff = False  # the role alone opens the Django admin
        users["admin"].save()
    client = sign_in(who)
    start = {"admin": "console-gold", "engineer": "experiment-list", "rater": "rate-home"}[who]
    seen, queue = set(), [reverse(start)]
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        assert all("login" not in hop for hop, _ in response.redirect_chain), (url, response.redirect_chain)
        if "text/html" in response["Content-Type"]:
            queue.extend(link for link in _nav_links(response.content.decode()) if link.startswith("/"))
    expected = {
        "admin": {"/overview/", "/raters/", "/console/", "/console/reports/", "/console/pools/", "/admin/"},
        "engineer": {"/experiments/", "/api/docs/"},
        "rater": {"/rate/"},
    }[who]
    assert expected <= seen
    if who != "admin":
        assert not {url for url in seen if url.startswith(("/console/", "/admin/", "/overview/"))}


def test_the_django_admin_works_for_the_admin_role_without_deleting(sign_in, users, experiment):
    client = sign_in("admin")
    content = client.get("/admin/").content.decode()
    assert "You don’t have permission" not in content and "Budget pools" in content
    assert client.get(reverse("admin:raterapp_budgetchange_changelist")).status_code == 200
    assert client.get(reverse("admin:raterapp_experimentbudget_changelist")).status_code == 200
    assert client.get(reverse("admin:raterapp_budgetpool_add")).status_code == 200
    judgements = reverse("admin:raterapp_experiment_delete", args=[experiment.pk])
    assert client.get(judgements).status_code == 403
    assert sign_in("engineer").get("/admin/").status_code == 302  # to the admin's sign-in


def test_every_link_of_the_overview_and_the_console_answers_200_for_an_admin(sign_in, experiment, report, users):
    """Where the budget links used to open bare 403 pages: every link on these pages now works."""
    client = sign_in("admin")
    pages = ["/overview/", *(reverse(page) for page in PAGES)]
    links = set()
    for url in pages:
        links |= set(re.findall(r'<a [^>]*href="(/[^"#]*)', client.get(url).content.decode()))
    assert {"/console/pools/", "/console/audit/", f"/experiments/{experiment.pk}/"} <= links
    for link in sorted(links):
        response = client.get(link.replace("&amp;", "&"), follow=True)
        assert response.status_code == 200, link
        assert all("login" not in hop for hop, _ in response.redirect_chain), link


@pytest.mark.parametrize(("who", "lands"), [("admin", "/admin/"), ("engineer", None)])
def test_the_django_admin_sign_in_is_open_to_the_admin_role_only(client, users, who, lands):
    response = client.post("/admin/login/?next=/admin/", {"username": who, "password": f"pw-{who}", "next": "/admin/"})
    if lands:
        assert response.status_code == 302 and response["Location"] == lands
        assert client.get(lands).status_code == 200
    else:
        assert response.status_code == 200 and "staff account" in response.content.decode()
        assert client.get("/admin/").status_code == 302
