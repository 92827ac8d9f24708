"""The console's audit log: every change the app records, in one place, filtered by kind, by
who made it and by experiment. People and access (quotas, pauses, assignments, roles, accounts,
tokens, verdict changes and voids, deleted experiments) come from the audit log through the
selector ``GET /api/audit/`` reads too, a page at a time; budget and pool changes and what
admins did to pairs follow, under the same filters. Roles: admins, as every console page."""

from __future__ import annotations

from typing import TypedDict, cast
from urllib.parse import urlencode

from django import forms
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views import View

from raterapp.models import Experiment
from raterapp.selectors.audit import KINDS, audit_actors_list, audit_entries_list, audit_experiments_list
from raterapp.selectors.console import budget_changes_recent, console_actions_recent

from .console import ConsolePageMixin

PER_PAGE = 50
BUDGETS, PAIRS = "budget", "pairs"
ALL_KINDS = (
    ("", "Every kind"),
    *KINDS,
    (BUDGETS, "Budget or pool changed"),
    (PAIRS, "Report resolved or pair retired"),
)


class _Filter(TypedDict):
    actor_id: int | None
    experiment_id: int | None


class AuditFilterForm(forms.Form):
    kind = forms.ChoiceField(label="Kind", choices=ALL_KINDS, required=False)
    actor: forms.ModelChoiceField[User] = forms.ModelChoiceField(
        label="Who", queryset=None, required=False, empty_label="Anyone"
    )
    experiment: forms.ModelChoiceField[Experiment] = forms.ModelChoiceField(
        label="Experiment", queryset=None, required=False, empty_label="Any"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["actor"]).queryset = audit_actors_list()
        cast(forms.ModelChoiceField, self.fields["experiment"]).queryset = audit_experiments_list()


class AuditPageView(ConsolePageMixin, View):
    tab = "audit"

    def get(self, request):
        form = AuditFilterForm(request.GET or None)
        chosen = form.cleaned_data if form.is_valid() else {}
        kind = chosen.get("kind") or ""
        ids: _Filter = {
            "actor_id": chosen["actor"].pk if chosen.get("actor") else None,
            "experiment_id": chosen["experiment"].pk if chosen.get("experiment") else None,
        }
        context = {"form": form, "kind": kind, "filtered": bool(kind or any(ids.values()))}
        if kind not in (BUDGETS, PAIRS):
            entries = audit_entries_list(action=kind or None, **ids)
            context["entries"] = Paginator(entries, PER_PAGE).get_page(request.GET.get("page"))
            context["query"] = _query_without_page(request.GET)
        if kind in ("", BUDGETS):
            context["changes"] = budget_changes_recent(**ids)
        if kind in ("", PAIRS):
            context["actions"] = console_actions_recent(**ids)
        status = 200 if form.is_valid() or not request.GET else 400
        return render(request, "raterapp/console/audit.html", self.page_context(**context), status=status)


def _query_without_page(params) -> str:
    """The filters chosen (empty ones left out), for the links to other pages."""
    return urlencode([(name, value) for name, value in params.items() if name != "page" and value])
