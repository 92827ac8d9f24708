"""The pair explorer page: an experiment's sampled pairs, filtered and ordered, with both items
and their clusters, and the clusters that carry most of the change.

Roles as the experiment page (``EngineerPageMixin``): engineers who own or were granted the
experiment, and admins; others signed in get a friendly 403 page, anonymous users go to the
sign-in page, and an experiment that is not visible answers 404.

The page is a shell: ``static/raterapp/js/pair_explorer.js`` reads the explorer API
(``raterapp/api/explorer.py``) and renders the table, the clusters and the pair panel. Its
configuration travels in one ``json_script`` block, so no inline script carries data.
"""

from __future__ import annotations

from django.shortcuts import render
from django.urls import reverse
from django.views import View

from metrics_core import PAIR_CLASSES
from raterapp.access import ADMIN, access_experiment_for_engineer
from raterapp.models import Verdict
from raterapp.selectors.dashboard import experiment_badge_for
from raterapp.selectors.explorer import PAIR_CLASS_ORDER, VERDICT_SUMMARIES, explorer_page_get

from .roles import EngineerPageMixin

# The API path that takes a pair id of its own; the page fills it in (``0`` is a placeholder).
ID_PLACEHOLDER = 0
PAGE_SIZE = 25
CLASS_LABELS = {"split": "Split", "merge": "Merge", "intersection": "Intersection", "self": "Self"}
VERDICT_LABELS = {
    "unjudged": "Not judged yet",
    **dict(Verdict.choices),
    "mixed": "Mixed: raters disagree",
    "self": "Self pair",
}


class ExplorerPageView(EngineerPageMixin, View):
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        page = explorer_page_get(experiment=experiment)
        config = {
            "experiment": experiment.pk,
            "pageSize": PAGE_SIZE,
            "verdictLabels": dict(Verdict.choices),
            "slices": page["slices"],
            "urls": {
                "pairs": reverse("api-explorer-pairs", args=[experiment.pk]),
                "pair": reverse("api-explorer-pair", args=[experiment.pk, ID_PLACEHOLDER]),
                "clusters": reverse("api-explorer-clusters", args=[experiment.pk]),
            },
            "gold": {
                "create": reverse("api-gold-pairs", args=[experiment.pk]),
                "page": reverse("console-gold") + f"?experiment={experiment.pk}",
            }
            if ADMIN in self.roles
            else None,
        }
        context = self.page_context(
            experiment=experiment,
            has_sample=page["has_sample"],
            pair_classes=[(c, CLASS_LABELS[c]) for c in PAIR_CLASS_ORDER if c in PAIR_CLASSES],
            verdicts=[(v, VERDICT_LABELS[v]) for v in VERDICT_SUMMARIES],
            slices=sorted(page["slices"]),
            cluster_sides=(("base", "Base clusters"), ("exp", "Exp clusters")),
            explorer_config=config,
            badge=experiment_badge_for(experiment=experiment),
        )
        return render(request, "raterapp/experiments/pairs.html", context)
