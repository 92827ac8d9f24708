"""The admin console's pages about who rates what and what it may spend: the assignments (who
may rate each experiment, several raters assigned at once, open to every rater, its budget) and
the budget pools (created, renamed, resized, experiments attached and detached).

Roles and the shape of each page as :mod:`raterapp.views.console`: admins; a POST names its
``action``, calls one service and redirects back with a message; a refused POST shows the page
again with status 400 and the errors beside their fields.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from raterapp.access import access_experiment_for_engineer
from raterapp.forms import AssignRatersForm, ConsoleBudgetForm, PoolAttachForm, PoolCreateForm, PoolEditForm
from raterapp.models import BudgetPool
from raterapp.selectors.budgets import budget_get
from raterapp.selectors.console import experiments_for_console, pools_with_experiments, raters_list
from raterapp.selectors.rating_access import experiments_rating_access_of, experiments_waiting_of
from raterapp.services.accounts.raters import experiment_open_to_all_set, rater_assign, rater_unassign
from raterapp.services.experiments.budgets import budget_update, pool_create, pool_update

from .console import VIA, ConsolePageMixin, record_id
from .form_errors import service_errors


class AssignmentsPageView(ConsolePageMixin, View):
    """Who may rate each experiment and what it waits for (the same answer the API and the raters
    get: :mod:`raterapp.selectors.rating_access`); assign several raters at once, unassign one,
    open it to every rater or close it, and set the verdicts it may spend."""

    tab = "assignments"

    def get(self, request):
        return self.show(request)

    def show(self, request, *, status=200, failed_experiment=None, assign_form=None, budget_form=None, **extra):
        raters = list(raters_list())
        experiments = list(experiments_for_console().select_related("budget", "owner"))
        access = experiments_rating_access_of(experiments=experiments)
        waiting = experiments_waiting_of(experiments=experiments)
        for experiment in experiments:
            assigned = {user.pk for user in experiment.assigned_raters.all()}
            choices = [rater for rater in raters if rater.pk not in assigned]
            failed = failed_experiment == experiment.pk
            experiment.access = access[experiment.pk]  # type: ignore[attr-defined]  # for the template
            experiment.waiting = waiting.get(experiment.pk)  # type: ignore[attr-defined]  # for the template
            experiment.assign_form = (assign_form if failed else None) or AssignRatersForm(  # type: ignore[attr-defined]  # for the template
                raters=choices, prefix=f"e{experiment.pk}"
            )
            proposed = experiment.budget.max_verdicts or experiment.requested_verdicts
            experiment.budget_form = (budget_form if failed else None) or ConsoleBudgetForm(  # type: ignore[attr-defined]  # for the template
                initial={"max_verdicts": proposed}, prefix=f"b{experiment.pk}"
            )
        context = {
            "experiments": experiments,
            "raters": raters,
            "waiting_count": sum(1 for w in waiting.values() if w),
            **extra,
        }
        return render(request, "raterapp/console/assignments.html", self.page_context(**context), status=status)

    def post(self, request):
        experiment = access_experiment_for_engineer(request.user, request.POST.get("experiment"))
        action = request.POST.get("action")
        back = reverse("console-assignments") + f"#experiment-{experiment.pk}"
        if action == "assign":
            return self._assign(request, experiment, back)
        if action == "budget":
            return self._budget(request, experiment, back)
        if action == "unassign":
            rater_id = record_id(request.POST.get("rater"))
            rater = next((r for r in raters_list(active_only=False) if r.pk == rater_id), None)
            if rater is None:
                raise Http404("No such rater.")
            assigned = rater_unassign(actor=request.user, experiment=experiment, raters=[rater])
            rest = "" if assigned else " No rater is assigned any more."
            messages.success(request, f"{rater.get_username()} no longer rates {experiment.name}.{rest}")
        elif action == "open_to_all":
            opened = request.POST.get("open_to_all") == "true"
            experiment_open_to_all_set(actor=request.user, experiment=experiment, open_to_all=opened)
            if opened:
                messages.success(request, f"{experiment.name} is open to every rater while none is assigned.")
            else:
                messages.success(request, f"{experiment.name} is open only to the raters assigned to it.")
        else:
            raise Http404("No such action.")
        return redirect(back)

    def _assign(self, request, experiment, back):
        raters = list(raters_list())
        form = AssignRatersForm(request.POST, raters=raters, prefix=f"e{experiment.pk}")
        if form.is_valid():
            chosen = [r for r in raters if r.pk in set(form.cleaned_data["raters"])]
            try:
                rater_assign(actor=request.user, experiment=experiment, raters=chosen)
            except ValidationError as exc:
                service_errors(form, exc)
            else:
                names = ", ".join(r.get_username() for r in chosen)
                messages.success(request, f"{names} now {'rates' if len(chosen) == 1 else 'rate'} {experiment.name}.")
                return redirect(back)
        return self.refused(request, form, failed_experiment=experiment.pk, assign_form=form)

    def _budget(self, request, experiment, back):
        form = ConsoleBudgetForm(request.POST, prefix=f"b{experiment.pk}")
        if form.is_valid():
            try:
                budget_update(
                    budget=budget_get(experiment=experiment),
                    actor=request.user,
                    changes={"max_verdicts": form.cleaned_data["max_verdicts"]},
                    reason=form.cleaned_data["reason"],
                    via=VIA,
                )
            except ValidationError as exc:
                service_errors(form, exc)
            else:
                messages.success(
                    request, f"{experiment.name} may spend {form.cleaned_data['max_verdicts']:,} verdicts in all."
                )
                return redirect(back)
        return self.refused(request, form, failed_experiment=experiment.pk, budget_form=form)


class PoolsPageView(ConsolePageMixin, View):
    """Budget pools: create one, rename or resize it, attach experiments to it or detach them,
    and see what each spent."""

    tab = "pools"

    def get(self, request):
        return self.show(request)

    def show(
        self, request, *, status=200, create_form=None, failed_pool=None, attach_form=None, edit_form=None, **extra
    ):
        experiments = list(experiments_for_console().select_related("budget"))
        pools = pools_with_experiments()
        for row in pools:
            pool, failed = row["pool"], failed_pool == row["pool"].pk
            attached = {experiment.pk for experiment in row["experiments"]}
            choices = [e for e in experiments if e.pk not in attached]
            row["attach_form"] = (attach_form if failed else None) or PoolAttachForm(
                experiments=choices, prefix=f"p{pool.pk}"
            )
            row["edit_form"] = (edit_form if failed else None) or PoolEditForm(
                initial={"name": pool.name, "max_verdicts": pool.max_verdicts}, prefix=f"edit{pool.pk}"
            )
            row["edit_open"] = failed and edit_form is not None
        context = {"pools": pools, "create_form": create_form or PoolCreateForm(prefix="pool"), **extra}
        return render(request, "raterapp/console/pools.html", self.page_context(**context), status=status)

    def post(self, request):
        action = request.POST.get("action")
        if action == "create":
            form: Form = PoolCreateForm(request.POST, prefix="pool")
            if form.is_valid():
                try:
                    pool = pool_create(actor=request.user, via=VIA, **form.cleaned_data)
                except ValidationError as exc:
                    service_errors(form, exc)
                else:
                    messages.success(request, f"Pool {pool.name} created: {pool.max_verdicts} verdicts.")
                    return redirect(reverse("console-pools") + f"#pool-{pool.pk}")
            return self.refused(request, form, create_form=form)
        pool = get_object_or_404(BudgetPool, pk=record_id(request.POST.get("pool")))
        back = reverse("console-pools") + f"#pool-{pool.pk}"
        if action == "edit":
            form = PoolEditForm(request.POST, prefix=f"edit{pool.pk}")
            if form.is_valid():
                changes = {name: form.cleaned_data[name] for name in ("name", "max_verdicts")}
                try:
                    pool = pool_update(
                        pool=pool, actor=request.user, changes=changes, reason=form.cleaned_data["reason"], via=VIA
                    )
                except ValidationError as exc:
                    service_errors(form, exc)
                else:
                    messages.success(request, f"Pool {pool.name} pays for {pool.max_verdicts:,} verdicts.")
                    return redirect(back)
            return self.refused(request, form, failed_pool=pool.pk, edit_form=form)
        if action == "attach":
            form = PoolAttachForm(request.POST, experiments=experiments_for_console(), prefix=f"p{pool.pk}")
            if form.is_valid():
                experiment = access_experiment_for_engineer(request.user, form.cleaned_data["experiment"])
                try:
                    budget_update(
                        budget=budget_get(experiment=experiment),
                        actor=request.user,
                        changes={"pool": pool},
                        reason=form.cleaned_data["reason"],
                        via=VIA,
                    )
                except ValidationError as exc:
                    service_errors(form, exc)
                else:
                    messages.success(request, f"{experiment.name} now spends from {pool.name}.")
                    return redirect(back)
            return self.refused(request, form, failed_pool=pool.pk, attach_form=form)
        if action == "detach":
            experiment = access_experiment_for_engineer(request.user, request.POST.get("experiment"))
            budget = budget_get(experiment=experiment)
            if budget.pool_id != pool.pk:
                raise Http404("The experiment is not in this pool.")
            reason = f"Detached from {pool.name} on the pools page."
            budget_update(budget=budget, actor=request.user, changes={"pool": None}, reason=reason, via=VIA)
            messages.success(request, f"{experiment.name} no longer spends from {pool.name}.")
            return redirect(back)
        raise Http404("No such action.")
