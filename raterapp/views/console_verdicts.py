"""The admin console's Verdicts page: find a rater's verdicts in a time range, void them all or
one of them with a reason (the same reversal as a rater's undo: refunds to the pool charged,
pairs back in the queue, estimates recomputed), and the latest changes and voids of verdicts
from the audit log. Roles: admins, as every console page."""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views import View

from raterapp.access import access_rater_for_admin
from raterapp.selectors.console import raters_list
from raterapp.selectors.verdict_history import rater_verdicts_in_range, verdict_audit_recent
from raterapp.services.judging import judgements_void

from .console import ConsolePageMixin
from .form_errors import service_errors

LOCAL = "%Y-%m-%dT%H:%M"
SHOWN = 200


class VerdictRangeForm(forms.Form):
    rater = forms.ChoiceField(label="Rater")
    since = forms.DateTimeField(
        label="From", input_formats=[LOCAL], widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=LOCAL)
    )
    until = forms.DateTimeField(
        label="To", input_formats=[LOCAL], widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=LOCAL)
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["rater"]).choices = [("", "Choose a rater")] + [
            (str(r.pk), r.get_username()) for r in raters_list(active_only=False)
        ]

    def clean(self):
        data = super().clean()
        assert data is not None, "Form.clean returns cleaned_data"
        if data.get("since") and data.get("until") and data["until"] <= data["since"]:
            self.add_error("until", "The end of the range must come after its start.")
        return data


class VerdictVoidForm(VerdictRangeForm):
    reason = forms.CharField(
        label="Reason", max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), help_text="Kept in the audit log."
    )
    judgement = forms.IntegerField(required=False, widget=forms.HiddenInput)


class VerdictsPageView(ConsolePageMixin, View):
    tab = "verdicts"

    def get(self, request):
        if "rater" in request.GET:
            return self.show(request, range_form=VerdictRangeForm(request.GET, prefix=None))
        now = timezone.localtime().replace(second=0, microsecond=0)
        initial = {"since": now - timedelta(hours=1), "until": now + timedelta(minutes=1)}
        return self.show(request, range_form=VerdictRangeForm(initial=initial))

    def show(self, request, *, range_form, void_form=None, status=200):
        context = {"range_form": range_form, "audit": verdict_audit_recent(), "verdicts": None}
        if range_form.is_bound and range_form.is_valid():
            data = range_form.cleaned_data
            rater = access_rater_for_admin(request.user, data["rater"])
            found = rater_verdicts_in_range(rater=rater, since=data["since"], until=data["until"])
            context |= {
                "rater": rater,
                "verdicts": list(found[:SHOWN]),
                "total": found.count(),
                "since_value": _local(data["since"]),
                "until_value": _local(data["until"]),
                "void_form": void_form or VerdictVoidForm(initial={**data, "rater": str(rater.pk)}),
            }
        failed = void_form if void_form is not None and void_form.errors else None
        return render(
            request, "raterapp/console/verdicts.html", self.page_context(failed_form=failed, **context), status=status
        )

    def post(self, request):
        form = VerdictVoidForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            rater = access_rater_for_admin(request.user, data["rater"])
            try:
                voided = judgements_void(
                    actor=request.user,
                    reason=data["reason"],
                    judgement_id=data["judgement"],
                    rater=None if data["judgement"] else rater,
                    since=None if data["judgement"] else data["since"],
                    until=None if data["judgement"] else data["until"],
                )
            except ValidationError as exc:
                service_errors(form, exc)
            else:
                n = len(voided)
                messages.success(request, f"{n} verdict{'' if n == 1 else 's'} of {rater.get_username()} voided.")
                query = {"rater": rater.pk, "since": _local(data["since"]), "until": _local(data["until"])}
                return redirect(reverse("console-verdicts") + "?" + urlencode(query))
        range_form = VerdictRangeForm({key: request.POST.get(key, "") for key in ("rater", "since", "until")})
        return self.show(request, range_form=range_form, void_form=form, status=400)


def _local(value) -> str:
    return timezone.localtime(value).strftime(LOCAL)
