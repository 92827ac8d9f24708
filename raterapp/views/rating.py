"""Rater pages: the experiments open for rating, and the judging page of one of them.

Roles: raters (and superusers, who hold every role); anyone else signed in gets a friendly
403 page, anonymous users go to the sign-in page. An experiment that is not open for rating
answers 404 like a missing one (``access_experiment_for_rater``).

The judging page is a shell: ``static/raterapp/js/judging.js`` leases pairs, submits verdicts
and renders the item cards through the JSON API (``raterapp/api/judging.py``). The page's
configuration travels in one ``json_script`` block, so no inline script carries data.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import View

from raterapp.access import ADMIN, ENGINEER, RATER, access_experiment_for_rater, user_roles
from raterapp.models import Verdict
from raterapp.selectors.rater_home import rater_home_rows, rater_standing_get
from raterapp.selectors.verdict_history import HISTORY_LIMIT
from raterapp.vocabulary import RATER_BLOCKED_WORDS, rater_end_screen_words

from .roles import RaterPageMixin

# The API paths that take an id of their own; the page fills it in (``0`` is a placeholder).
ID_PLACEHOLDER = 0
# The pair's two cards as the rater sees them: left is "Item A", right is "Item B".
SIDES = (("left", "Item A"), ("right", "Item B"))


def home(request):
    """The site's front door: raters to their experiments, everyone else to the experiment list.

    Anonymous visitors sign in first and come back here, so they land on the right page for
    their role (not on a 403 page).
    """
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("home"))
    roles = user_roles(request.user)
    if RATER in roles and not roles & {ENGINEER, ADMIN}:
        return redirect("rate-home")
    return redirect("experiment-list")


class RaterHomePageView(RaterPageMixin, View):
    def get(self, request):
        standing = rater_standing_get(rater=request.user)
        context = self.page_context(
            experiments=[_home_row(row) for row in rater_home_rows(rater=request.user, standing=standing)],
            daily_left=standing["quota"]["daily_left"],
            total_left=standing["quota"]["total_left"],
            paused=standing["paused"],
        )
        return render(request, "raterapp/rating/home.html", context)


def _home_row(row: dict) -> dict:
    words = RATER_BLOCKED_WORDS.get(row["blocked"], {"home": ("Ready", "Pairs are waiting for you."), "waits": True})
    (title, text), waits = words["home"], words["waits"]
    return {**row, "status_title": title, "status_text": text, "can_wait": waits}


class JudgePageView(RaterPageMixin, View):
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_rater(request.user, experiment_id)
        config = {
            "experiment": experiment.pk,
            "leaseSeconds": settings.LEASE_SECONDS,
            "undoSeconds": settings.UNDO_SECONDS,
            "historySize": HISTORY_LIMIT,
            "verdictLabels": dict(Verdict.choices),
            "endWords": rater_end_screen_words(),
            "urls": {
                "home": reverse("rate-home"),
                "nextPair": reverse("api-next-pair", args=[experiment.pk]),
                "judgements": reverse("api-judgements"),
                "undo": reverse("api-judgement-undo", args=[ID_PLACEHOLDER]),
                "myVerdicts": reverse("api-experiment-my-verdicts", args=[experiment.pk]),
                "report": reverse("api-task-report", args=[ID_PLACEHOLDER]),
                "renew": reverse("api-leases-renew"),
            },
        }
        context = self.page_context(
            experiment=experiment,
            lease_seconds=settings.LEASE_SECONDS,
            undo_seconds=settings.UNDO_SECONDS,
            judging_config=config,
            sides=SIDES,
        )
        return render(request, "raterapp/rating/judge.html", context)
