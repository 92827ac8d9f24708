"""The admin console: gold questions, the inbox of broken-pair reports, which raters rate which
experiment and budget pools (:mod:`raterapp.views.console_access`), and the audit log
(:mod:`raterapp.views.console_audit`).

Roles: admins (and superusers); anyone else signed in gets the friendly 403 page, anonymous
users go to the sign-in page. Every page is a plain form page: a POST names its ``action``,
calls one service and redirects back with a message (the service writes who and when, and
budget changes go to the audit log); a refused POST renders the page again with status 400,
the errors listed at the top (focused, each linking to its field) and beside their fields.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from raterapp.access import ADMIN, access_experiment_for_engineer
from raterapp.forms import GoldAnswerForm, GoldPairForm, GoldRateForm, ReportResolveForm
from raterapp.models import BudgetChange, PairReport, PairTask
from raterapp.selectors.console import experiments_with_sample
from raterapp.selectors.rater_quality import gold_accuracy_list, gold_pairs_list, pair_reports_inbox
from raterapp.services.judging.gold import (
    experiment_gold_rate_set,
    gold_answer_set,
    gold_pair_create,
    gold_restore,
    gold_retire,
)
from raterapp.services.judging.report_resolution import pair_report_resolve

from .form_errors import error_summary, service_errors
from .roles import AdminPageMixin

TABS = (
    ("gold", "Gold questions", "console-gold"),
    ("reports", "Reported pairs", "console-reports"),
    ("assignments", "Assignments", "console-assignments"),
    ("pools", "Budget pools", "console-pools"),
    ("verdicts", "Verdicts", "console-verdicts"),
    ("audit", "Audit log", "console-audit"),
)
VIA = BudgetChange.Via.PAGE


class ConsolePageMixin(AdminPageMixin):
    nav_active = "console"
    tab = ""
    show: Callable[..., HttpResponse]  # each page's own

    def page_context(self, **extra) -> dict:
        tabs = [{"key": key, "label": label, "url": reverse(name)} for key, label, name in TABS]
        failed = extra.pop("failed_form", None)
        return super().page_context(
            console_tabs=tabs,
            console_tab=self.tab,
            open_reports=pair_reports_inbox().count() if ADMIN in getattr(self, "roles", ()) else 0,
            error_summary=error_summary(failed) if failed is not None else [],
            **extra,
        )

    def refused(self, request, failed_form, **extra):
        return self.show(request, status=400, failed_form=failed_form, **extra)


class ConsoleHomeView(ConsolePageMixin, View):
    def get(self, request):
        return redirect("console-gold")


# ---- gold questions ------------------------------------------------------------------------------


class GoldPageView(ConsolePageMixin, View):
    """Gold questions of one experiment: add any pair of its items, change the gold rate,
    correct an answer, retire or restore a question; and each rater's gold accuracy."""

    tab = "gold"

    def get(self, request):
        return self.show(request)

    def show(self, request, *, status=200, experiment=None, **forms):
        experiments = list(experiments_with_sample())
        if experiment is None and experiments:
            chosen = request.GET.get("experiment")
            experiment = next((e for e in experiments if str(e.pk) == chosen), experiments[0])
        context = {"experiments": experiments, "experiment": experiment}
        if experiment is not None:
            gold = list(gold_pairs_list(experiment=experiment).select_related("retired_by", "created_by"))
            answer_task = forms.pop("answer_task", None)
            answer_form = forms.pop("answer_form", None)
            for task in gold:
                form = answer_form if answer_task == task.pk else None
                task.answer_form = form or GoldAnswerForm(  # type: ignore[attr-defined]  # for the template
                    initial={"answer": task.gold_answer}, prefix=f"t{task.pk}"
                )
            context |= {
                "gold": gold,
                "active_gold": sum(1 for task in gold if task.retired_at is None),
                "accuracy": gold_accuracy_list(experiment=experiment),
                "add_form": forms.pop("add_form", None) or GoldPairForm(prefix="gold"),
                "rate_form": forms.pop("rate_form", None)
                or GoldRateForm(initial={"gold_rate": experiment.gold_rate}, prefix="rate"),
                "explorer_url": reverse("experiment-pairs", args=[experiment.pk]),
            }
        context |= forms
        return render(request, "raterapp/console/gold.html", self.page_context(**context), status=status)

    def post(self, request):
        experiment = access_experiment_for_engineer(request.user, request.POST.get("experiment"))
        action = request.POST.get("action")
        back = reverse("console-gold") + f"?experiment={experiment.pk}"
        if action == "add":
            form: Form = GoldPairForm(request.POST, prefix="gold")
            if form.is_valid():
                try:
                    task = gold_pair_create(experiment=experiment, actor=request.user, **form.cleaned_data)
                except ValidationError as exc:
                    service_errors(form, exc)
                else:
                    messages.success(request, f"Gold question {task.pk} added: {task.get_gold_answer_display()}.")
                    return redirect(back + "#gold-list")
            return self.refused(request, form, experiment=experiment, add_form=form)
        if action == "rate":
            form = GoldRateForm(request.POST, prefix="rate")
            if form.is_valid():
                try:
                    experiment_gold_rate_set(experiment=experiment, actor=request.user, **form.cleaned_data)
                except ValidationError as exc:
                    service_errors(form, exc)
                else:
                    messages.success(request, f"Gold rate set to {experiment.gold_rate:g}.")
                    return redirect(back)
            return self.refused(request, form, experiment=experiment, rate_form=form)
        task = _gold_task(experiment, request.POST.get("task"))
        if action == "answer":
            form = GoldAnswerForm(request.POST, prefix=f"t{task.pk}")
            if form.is_valid():
                gold_answer_set(task=task, actor=request.user, answer=form.cleaned_data["answer"])
                messages.success(request, f"Gold question {task.pk} now answers {task.get_gold_answer_display()}.")
                return redirect(back + f"#gold-{task.pk}")
            return self.refused(request, form, experiment=experiment, answer_task=task.pk, answer_form=form)
        if action == "retire":
            gold_retire(task=task, actor=request.user)
            messages.success(request, f"Gold question {task.pk} is retired: no rater gets it any more.")
        elif action == "restore":
            gold_restore(task=task, actor=request.user)
            messages.success(request, f"Gold question {task.pk} is served again.")
        else:
            raise Http404("No such action.")
        return redirect(back + f"#gold-{task.pk}")


def _gold_task(experiment, task_id) -> PairTask:
    try:
        return PairTask.objects.gold().get(experiment=experiment, pk=int(task_id))
    except (PairTask.DoesNotExist, TypeError, ValueError):
        raise Http404("No such gold question.") from None


# ---- reported pairs ------------------------------------------------------------------------------


class ReportsPageView(ConsolePageMixin, View):
    """Pairs raters reported as broken: open ones with a form each, or the resolved ones."""

    tab = "reports"

    def get(self, request):
        return self.show(request)

    def show(self, request, *, status=200, failed_report=None, form=None, **extra):
        resolved = request.GET.get("show") == "resolved"
        reports = list(pair_reports_inbox(resolved=resolved)[:200])
        if not resolved:
            for report in reports:
                bound = form if failed_report == report.pk else None
                report.form = bound or ReportResolveForm(prefix=f"r{report.pk}")  # type: ignore[attr-defined]  # for the template
        context = {"reports": reports, "resolved": resolved, **extra}
        return render(request, "raterapp/console/reports.html", self.page_context(**context), status=status)

    def post(self, request):
        report = get_object_or_404(
            PairReport.objects.select_related("task__experiment", "task__item_a", "task__item_b"),
            pk=record_id(request.POST.get("report")),
        )
        form = ReportResolveForm(request.POST, prefix=f"r{report.pk}")
        if form.is_valid():
            try:
                pair_report_resolve(report=report, actor=request.user, **form.service_arguments())
            except ValidationError as exc:
                service_errors(form, exc)
            else:
                resolution = PairReport.Resolution(form.service_arguments()["resolution"]).label
                messages.success(request, f"Report {report.pk} resolved: {resolution.lower()}.")
                return redirect("console-reports")
        return self.refused(request, form, failed_report=report.pk, form=form)


def record_id(value) -> int:
    """A posted record id as a number; 404 (no such record) for anything else."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise Http404("No such record.") from None
