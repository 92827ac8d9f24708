"""Experiment pages for engineers: the list, the upload form and one experiment's progress.

Roles: engineers see the experiments they own or were granted, admins all of them; anyone
else signed in gets a friendly 403 page, anonymous users go to the sign-in page. An
experiment that is not visible answers 404 like a missing one (``access_experiment_for_engineer``).
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views import View

from raterapp.access import ADMIN, access_experiment_for_engineer, access_experiment_for_owner
from raterapp.exceptions import StateConflict
from raterapp.forms import BudgetForm, ExperimentCreateForm
from raterapp.models import PREPARATION_STEPS, PREPARING, BudgetChange, Experiment
from raterapp.selectors.batches import sample_batch_proposal
from raterapp.selectors.budgets import budget_changes_list, budget_get, budget_summary_get
from raterapp.selectors.dashboard import experiment_dashboard_get, experiment_list_rows
from raterapp.selectors.experiments import experiment_judging_progress_get, experiment_list
from raterapp.services.experiments.budgets import budget_update
from raterapp.services.experiments.control import (
    ARCHIVABLE,
    deciding_metrics_for,
    experiment_archive,
    experiment_unarchive,
)
from raterapp.services.experiments.create import experiment_create
from raterapp.services.experiments.deletion import experiment_delete
from raterapp.services.experiments.spec import experiment_spec
from raterapp.services.preparation.control import experiment_preparation_rerun, preparation_stalled
from raterapp.vocabulary import DECISION_LABELS, METRIC_HELP, RATER_AWARE_HELP, TERMS, metric_label

from .form_errors import error_summary
from .roles import EngineerPageMixin

Status = Experiment.Status

# The preparation in the order the user sees it, ending in rating.
STEPS = (*PREPARATION_STEPS, Status.RATING)

# Overall impact metrics in the order of the paper's identities:
# JaccardDistance = SplitDistance + MergeDistance, JaccardIndex = Affected + Unaffected.
IMPACT_ROWS = (
    ("JaccardDistance", 0, "Share of weighted pairs whose togetherness changed"),
    ("SplitDistance", 1, "… because Exp split them apart"),
    ("MergeDistance", 1, "… because Exp merged them"),
    ("JaccardIndex", 0, "Weighted Jaccard similarity of Base and Exp"),
    ("AffectedJaccardIndex", 1, "… contributed by affected items"),
    ("UnaffectedJaccardIndex", 1, "… contributed by unaffected items"),
    ("SplitRate", 0, "Weighted rate of items that lost cluster mates"),
    ("MergeRate", 0, "Weighted rate of items that gained cluster mates"),
    ("AffectedWeightFraction", 0, "Share of the weight on items the change affects"),
)


def preparation_steps(experiment: Experiment) -> list[dict]:
    """Each step with its state: ``done``, ``current`` or ``pending`` (all ``stopped`` when FAILED).

    The page shows them through ``_steps.html``, also served alone (``experiment-steps``) for its poller.
    """
    status = experiment.status
    if status == Status.FAILED:
        return [{"status": step, "label": step.label, "state": "stopped"} for step in STEPS]
    if status == Status.DONE:
        reached = len(STEPS)
    elif status == Status.QUEUED:
        reached = 0
    else:
        reached = STEPS.index(status)
    steps = []
    for index, step in enumerate(STEPS):
        if index < reached or (step == Status.RATING and index == reached):
            state = "done"
        elif index == reached:
            state = "current"
        else:
            state = "pending"
        steps.append({"status": step, "label": step.label, "state": state})
    return steps


def preparation_percent(experiment: Experiment) -> int:
    """How far the whole preparation has come, 0 to 100 (for the list page)."""
    if experiment.status in (Status.RATING, Status.DONE):
        return 100
    if experiment.status not in PREPARATION_STEPS:
        return 0
    index = STEPS.index(experiment.status)
    return round(100 * (index + min(max(experiment.progress, 0.0), 1.0)) / (len(STEPS) - 1))


def _impact_rows(experiment: Experiment) -> list[dict]:
    metrics = (experiment.impact or {}).get("metrics") or {}
    return [
        {"name": name, "level": level, "help": text, "value": metrics.get(name)} for name, level, text in IMPACT_ROWS
    ]


class ExperimentListPageView(EngineerPageMixin, View):
    def get(self, request):
        archived = request.GET.get("archived") == "true"
        rows = experiment_list_rows(experiments=experiment_list(user=request.user, archived=archived))
        for row in rows:
            row["preparation_percent"] = preparation_percent(row["experiment"])
        archived_count = experiment_list(user=request.user, archived=True).count()
        context = self.page_context(rows=rows, archived=archived, archived_count=archived_count)
        return render(request, "raterapp/experiments/list.html", context)


class ExperimentCreatePageView(EngineerPageMixin, View):
    template_name = "raterapp/experiments/new.html"

    def get(self, request):
        """``?from=<id>``: filled in with the settings of an experiment the engineer may see."""
        if "from" not in request.GET:
            return render(request, self.template_name, self.page_context(form=ExperimentCreateForm()))
        source = access_experiment_for_engineer(request.user, request.GET["from"])
        form = ExperimentCreateForm.from_experiment(source)
        return render(request, self.template_name, self.page_context(form=form, source=source))

    def post(self, request):
        form = ExperimentCreateForm(request.POST, request.FILES)
        if form.is_valid():
            try:
                files = form.files_given()
                spec = experiment_spec(files=files, **form.parameters())
                experiment = experiment_create(owner=request.user, spec=spec, files=files)
            except ValidationError as exc:
                _add_service_errors(form, exc)
            else:
                return redirect("experiment-detail", experiment_id=experiment.pk)
        errors = error_summary(form) + [
            {"href": "#files_errors", "text": f"Files: {message}"} for message in getattr(form, "file_errors", [])
        ]
        return render(request, self.template_name, self.page_context(form=form, error_summary=errors), status=400)


def _add_service_errors(form: ExperimentCreateForm, exc: ValidationError) -> None:
    """The service's errors next to their fields; upload problems ("files") above the file inputs."""
    form.file_errors = []
    for field, messages in exc.message_dict.items():
        if field == "files":
            form.file_errors.extend(messages)
        elif field in form.fields:
            form.add_error(field, messages)
        else:
            form.add_error(None, messages if field == NON_FIELD_ERRORS else [f"{field}: {m}" for m in messages])


class ExperimentPageView(EngineerPageMixin, View):
    def get(self, request, experiment_id: int):
        return self.render_page(request, access_experiment_for_engineer(request.user, experiment_id))

    def render_page(
        self,
        request,
        experiment: Experiment,
        *,
        budget_form: BudgetForm | None = None,
        rerun_refused="",
        status=200,
        errors=(),
    ):
        steps = preparation_steps(experiment)
        budget = budget_get(experiment=experiment)
        dashboard = experiment_dashboard_get(experiment=experiment)
        context = self.page_context(
            experiment=experiment,
            steps=steps,
            waiting_label=(dashboard["badge"].get("waiting") or {}).get("label", ""),
            preparing=experiment.status in PREPARING,
            failed=experiment.status == Status.FAILED,
            failed_step=Status(experiment.error_step).label if experiment.error_step in Status.values else "",
            stalled=preparation_stalled(experiment=experiment),
            rerun_refused=rerun_refused,
            ready=experiment.status in (Status.RATING, Status.DONE),
            progress_percent=round(100 * min(max(experiment.progress, 0.0), 1.0)),
            impact_rows=_impact_rows(experiment),
            judging=experiment_judging_progress_get(experiment=experiment),
            files=experiment.files.order_by("kind"),
            dashboard=dashboard,
            can_change=experiment.owner_id == request.user.pk or ADMIN in self.roles,
            budget=budget_summary_get(budget=budget),
            budget_form=(budget_form or _budget_form_of(budget)) if ADMIN in self.roles else None,
            budget_changes=budget_changes_list(experiment=experiment)[:5],
            total_draws=sum(b["draws"] for b in dashboard["batches"] if b["status"] == "done") or experiment.n_draws,
            metric_help=METRIC_HELP,
            rater_aware_help=RATER_AWARE_HELP,
            deciding_metrics=[(name, metric_label(name)) for name in deciding_metrics_for(experiment.scheme)],
            decision_sentence=(dashboard["decision"] or {}).get("sentence", ""),
            batch_proposal=_batch_proposal(experiment, dashboard),
            archivable=experiment.status in ARCHIVABLE,
            error_summary=list(errors),
        )
        return render(request, "raterapp/experiments/detail.html", context, status=status)


def _batch_proposal(experiment: Experiment, dashboard: dict) -> dict:
    """The draws the batch form proposes: what should settle the decision, else the first sample's
    size, never more than the batch API accepts (``clamped`` then)."""
    settle = (dashboard.get("decision") or {}).get("settle") or {}
    return sample_batch_proposal(experiment=experiment, wanted=settle.get("needed_draws") or experiment.n_draws)


class ExperimentBudgetPageView(ExperimentPageView):
    """The budget form of the experiment page (admins): a change goes to the audit log with
    ``via=page``; errors show beside the fields on the page again."""

    def get(self, request, experiment_id: int):
        return redirect("experiment-detail", experiment_id=experiment_id)

    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        if ADMIN not in self.roles:
            return render(request, "raterapp/admin/forbidden.html", self.page_context(), status=403)
        form = BudgetForm(request.POST)
        if form.is_valid():
            fields = ("max_verdicts", "replication", "cost_per_verdict", "paused")
            changes = {name: form.cleaned_data[name] for name in fields}
            try:
                budget_update(
                    budget=budget_get(experiment=experiment),
                    actor=request.user,
                    changes=changes,
                    reason=form.cleaned_data["reason"],
                    via=BudgetChange.Via.PAGE,
                )
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    form.add_error(field if field in form.fields else None, messages)
            else:
                return redirect(reverse("experiment-detail", args=[experiment.pk]) + "#budget")
        return self.render_page(request, experiment, budget_form=form, status=400, errors=error_summary(form))


class ExperimentArchivePageView(EngineerPageMixin, View):
    """Archive (``archived=true``) or unarchive an experiment from its page: owner or admin."""

    def get(self, request, experiment_id: int):
        return redirect("experiment-detail", experiment_id=experiment_id)

    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_owner(request.user, experiment_id)
        try:
            if request.POST.get("archived") == "true":
                experiment_archive(experiment=experiment)
                flash.success(request, "Archived: the experiment list no longer shows it; its verdicts stay.")
            else:
                experiment_unarchive(experiment=experiment)
                flash.success(request, "Unarchived: the experiment list shows it again.")
        except ValidationError as exc:
            flash.error(request, " ".join(exc.messages))
        return redirect("experiment-detail", experiment_id=experiment.pk)


class ExperimentDeletePageView(EngineerPageMixin, View):
    """Delete a failed experiment with its files from its page (owner, admin): to the list."""

    def get(self, request, experiment_id: int):
        return redirect("experiment-detail", experiment_id=experiment_id)

    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_owner(request.user, experiment_id)
        try:
            experiment_delete(actor=request.user, experiment=experiment)
        except StateConflict as exc:
            flash.error(request, str(exc))
            return redirect("experiment-detail", experiment_id=experiment.pk)
        flash.success(request, f"Deleted “{experiment.name}” with its uploaded files.")
        return redirect("experiment-list")


class ExperimentPreparePageView(ExperimentPageView):
    """The experiment page's "Re-run the preparation" button (owner, admin): back to the page,
    which follows the new run; a refusal (running and healthy, prepared already) shows on it."""

    def get(self, request, experiment_id: int):
        return redirect("experiment-detail", experiment_id=experiment_id)

    def post(self, request, experiment_id: int):
        experiment = access_experiment_for_owner(request.user, experiment_id)
        try:
            experiment_preparation_rerun(experiment=experiment)
        except StateConflict as exc:
            return self.render_page(request, experiment, rerun_refused=str(exc), status=409)
        return redirect(reverse("experiment-detail", args=[experiment.pk]) + "#preparation")


def _budget_form_of(budget) -> BudgetForm:
    return BudgetForm(
        initial={
            "max_verdicts": budget.max_verdicts,
            "replication": budget.experiment.replication,
            "cost_per_verdict": budget.cost_per_verdict,
            "paused": budget.paused,
        }
    )


class GlossaryPageView(EngineerPageMixin, View):
    """The words and metrics of the experiment pages, each in one line."""

    def get(self, request):
        metrics = [{"name": name, "label": metric_label(name), "help": text} for name, text in METRIC_HELP.items()]
        terms = [{"term": term, "slug": slugify(term), "text": text} for term, text in TERMS]
        return render(
            request,
            "raterapp/experiments/glossary.html",
            self.page_context(terms=terms, metrics=metrics, decisions=DECISION_LABELS),
        )
