"""The admins' rater page: role table, the rows with their state, flags and quotas, the
script's configuration, and a hostile user name kept as text."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format

from raterapp.models import RaterProfile
from raterapp.selectors.raters import rater_stats_list
from raterapp.services.accounts.raters import rater_pause
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.rater_agreement import rater_agreement_refresh
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.django_db

ROLE_TABLE = [
    ("anonymous", 302),
    ("nobody", 403),
    ("rater", 403),
    ("engineer", 403),
    ("other_engineer", 403),
    ("admin", 200),
    ("superuser", 200),
]


@pytest.mark.parametrize(("who", "status"), ROLE_TABLE)
def test_role_table(sign_in, who, status):
    response = sign_in(who).get(reverse("raters"))
    assert response.status_code == status
    if status == 302:
        assert response["Location"] == "/login/?next=/raters/"
    elif status == 403:
        assert "This page is for admins" in response.content.decode()
        assert 'href="/raters/"' not in response.content.decode()


def _row(content: str, rater_id: int) -> str:
    match = re.search(rf'<tr data-rater="{rater_id}"[^>]*>(.*?)</tr>', content, re.S)
    assert match, f"no row for rater {rater_id}"
    return match.group(1)


def _config(content: str, name: str):
    return json.loads(re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', content, re.S).group(1))


def test_lists_raters_with_state_flags_and_quotas(client, users, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RATER_MIN_TIMED_VERDICTS = 2
    settings.RATER_MIN_SECONDS = 2.0
    fast = UserFactory(username="fast-fay", email="fay@example.org", roles=["rater"])
    experiment = experiment_prepared(owner=users["engineer"], name="Dedup")
    for _ in range(3):  # three verdicts in quick succession: two gaps of well under 2 seconds
        task = assignment_next(experiment=experiment, rater=fast)
        judgement_submit(task=task, rater=fast, verdict="equivalent", client_id=uuid.uuid4())
    paused = UserFactory(username="paused-pat", roles=["rater"])
    rater_pause(actor=users["admin"], rater=paused, reason="Checking the gold answers")
    RaterProfile.objects.filter(user=paused).update(daily_quota=50, total_quota=900)
    gone = UserFactory(username="gone-gil", roles=["rater"], is_active=False)

    client.force_login(users["admin"])
    content = client.get(reverse("raters")).content.decode()

    assert '<a href="/raters/" aria-current="page">Raters</a>' in content
    assert '<script type="module" src="/static/raterapp/js/raters_page.js"></script>' in content
    assert '<link rel="stylesheet" href="/static/raterapp/css/raters.css">' in content
    row = _row(content, fast.pk)
    assert '<span class="rater-name">fast-fay</span><span class="rater-email small muted">fay@example.org</span>' in row
    assert (
        '<span class="rater-flags" data-col="flags"><span class="reading reading--bad" data-flag="too_fast">Too fast</span></span></th>'
        in row
    )
    assert "Low gold accuracy" not in row
    assert (
        '<td class="num" data-col="verdicts" data-label="Verdicts"><span class="verdicts"><span>3</span> <span class="small muted unsure">0 % unsure</span></span></td>'
        in row
    )
    assert '<span class="badge badge--active">Active</span>' in row
    assert '<span class="quota">no daily limit</span><span class="quota">no total limit</span>' in row
    row = _row(content, paused.pk)
    assert '<span class="badge badge--paused">Paused</span>' in row
    assert '<span class="rater-reason small">Checking the gold answers</span>' in row
    assert '<span class="quota">50 a day</span><span class="quota">900 in all</span>' in row
    assert "rater-flags" not in row
    assert (
        '<td class="num" data-col="verdicts" data-label="Verdicts"><span class="verdicts"><span>0</span></span></td>'
        in row
    )
    row = _row(content, gone.pk)
    assert '<span class="badge badge--inactive">Deactivated</span>' in row
    assert "badge--active" not in row
    # The rater role members, sorted by name; the admin and engineer are not raters.
    assert re.findall(r'<tr data-rater="(\d+)"', content) == [str(u.pk) for u in (fast, gone, paused, users["rater"])]
    assert '<span class="muted small" data-rater-count>(4)</span>' in content

    data = _config(content, "raters-data")
    assert [(r["username"], r["flags"], r["paused_reason"]) for r in data] == [
        ("fast-fay", ["too_fast"], ""),
        ("gone-gil", [], ""),
        ("paused-pat", [], "Checking the gold answers"),
        ("rater", [], ""),
    ]
    assert _config(content, "raters-config") == {
        "raters": "/api/raters/",
        "rater": "/api/raters/0/",
        "password_link": "/api/raters/0/password-link/",
    }


def test_no_raters_yet(client, users):
    users["rater"].groups.clear()
    client.force_login(users["admin"])
    content = client.get(reverse("raters")).content.decode()
    assert '<p class="empty" data-no-raters>No raters yet.' in content
    assert '<div class="table-scroll raters-scroll" hidden>' in content
    assert _config(content, "raters-data") == []


def test_hostile_user_name_and_reason_are_escaped(client, users):
    hostile = UserFactory(username="<img src=x onerror=alert(1)>", roles=["rater"])
    rater_pause(actor=users["admin"], rater=hostile, reason="</script><script>alert(2)</script>")
    client.force_login(users["admin"])
    content = client.get(reverse("raters")).content.decode()
    assert "<img src=x" not in content
    assert "<script>alert(2)" not in content
    row = _row(content, hostile.pk)
    assert '<span class="rater-name">&lt;img src=x onerror=alert(1)&gt;</span>' in row
    assert '<span class="rater-reason small">&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;</span>' in row
    # In the embedded JSON too, the name cannot close the script element.
    names = [r["username"] for r in _config(content, "raters-data")]
    assert "<img src=x onerror=alert(1)>" in names


def test_the_agreement_is_the_workers_and_until_it_is_computed_the_page_says_so(client, users, settings, tmp_path):
    """The mean κ is what the worker stored after a snapshot (issue 36), on this page and the
    overview: before its first computation the page says so, no number."""
    settings.MEDIA_ROOT = tmp_path / "media"
    experiment = experiment_prepared(owner=users["engineer"], replication=2, name="Dedup")
    ann, bob = UserFactory(username="ann", roles=["rater"]), UserFactory(username="bob", roles=["rater"])
    for k in range(4):
        for rater in (ann, bob):
            task = assignment_next(experiment=experiment, rater=rater)
            verdict = "equivalent" if k % 2 or rater is ann else "not_equivalent"
            judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
    client.force_login(users["admin"])
    kappa = re.compile(r'<td class="num" data-col="agreement" data-label="Mean κ">([^<]*)</td>')

    for page in ("raters", "overview"):
        content = client.get(reverse(page)).content.decode()
        assert "The agreement is not computed yet: the worker computes it after the next estimate snapshot." in content
    assert kappa.findall(_row(client.get(reverse("raters")).content.decode(), ann.pk)) == ["—"]

    computed = rater_agreement_refresh(experiment_id=None)
    (ann_row,) = rater_stats_list(raters=[ann.pk])  # from the verdicts, as the row partial reads it
    assert ann_row["replicated_verdicts"] == 4 and ann_row["mean_kappa"] is not None
    content = client.get(reverse("raters")).content.decode()
    assert kappa.findall(_row(content, ann.pk)) == [f"{ann_row['mean_kappa']:.2f}"]
    moment = timezone.localtime(computed.computed_at)
    said = (
        f'The agreement is the worker\'s, computed <time datetime="{moment.isoformat()}">'
        f"{date_format(moment, 'j M Y, H:i')}</time> from 8 replicated verdicts, and again after each estimate snapshot."
    )
    assert said in content and said in client.get(reverse("overview")).content.decode()
