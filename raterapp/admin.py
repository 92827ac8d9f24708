from django import forms
from django.contrib import admin

from .models import (
    BudgetChange,
    BudgetPool,
    EstimateSnapshot,
    Experiment,
    ExperimentBudget,
    ImpactGroup,
    Item,
    Judgement,
    PairReport,
    PairTask,
    RaterProfile,
    RetractedJudgement,
    SampledPair,
)


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "scheme", "status", "items_count", "gold_rate", "created_at")
    list_filter = ("status", "scheme")
    search_fields = ("name", "description")
    readonly_fields = ("status", "progress", "error", "items_count", "dropped_items", "impact", "population_file")


@admin.register(Judgement)
class JudgementAdmin(admin.ModelAdmin):
    list_display = ("task", "rater", "verdict", "created_at")
    list_filter = ("verdict",)


@admin.register(PairTask)
class PairTaskAdmin(admin.ModelAdmin):
    list_display = ("pk", "experiment", "item_a", "item_b", "rank", "verdicts", "wanted", "gold_answer")
    list_filter = ("gold_answer", "experiment")
    raw_id_fields = ("item_a", "item_b", "created_by")


@admin.register(PairReport)
class PairReportAdmin(admin.ModelAdmin):
    """Pairs raters could not judge: look at the items, fix the catalogue or mark them."""

    list_display = ("task", "rater", "reason", "note", "created_at")
    list_filter = ("reason", "task__experiment")
    raw_id_fields = ("task",)


@admin.register(RetractedJudgement)
class RetractedJudgementAdmin(admin.ModelAdmin):
    list_display = ("task", "rater", "verdict", "judged_at", "retracted_at")
    readonly_fields = ("task", "rater", "verdict", "comment", "client_id", "judged_at", "retracted_at")


@admin.register(RaterProfile)
class RaterProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "daily_quota", "total_quota")
    search_fields = ("user__username",)


admin.site.register([Item, SampledPair, EstimateSnapshot, ImpactGroup])


class _WithReason(forms.ModelForm):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), help_text="Why: written to the audit log.")


class ExperimentBudgetForm(_WithReason):
    class Meta:
        model = ExperimentBudget
        fields = ("max_verdicts", "cost_per_verdict", "paused", "pool")


@admin.register(ExperimentBudget)
class ExperimentBudgetAdmin(admin.ModelAdmin):
    """Budgets change through the budget service, which writes the audit log."""

    form = ExperimentBudgetForm
    list_display = ("experiment", "max_verdicts", "spent", "cost_per_verdict", "paused", "pool")
    list_filter = ("paused", "pool")
    readonly_fields = ("experiment", "spent")

    def has_add_permission(self, request):
        return False  # every experiment has one

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        from .services.budgets import budget_update

        changes = {field: form.cleaned_data[field] for field in form.changed_data if field != "reason"}
        budget_update(
            budget=obj,
            actor=request.user,
            changes=changes,
            reason=form.cleaned_data["reason"],
            via=BudgetChange.Via.ADMIN,
        )


class BudgetPoolForm(_WithReason):
    class Meta:
        model = BudgetPool
        fields = ("name", "max_verdicts", "paused")


@admin.register(BudgetPool)
class BudgetPoolAdmin(admin.ModelAdmin):
    form = BudgetPoolForm
    list_display = ("name", "max_verdicts", "spent", "paused", "created_at")
    readonly_fields = ("spent",)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        from .services.budgets import pool_create, pool_update

        reason, via = form.cleaned_data["reason"], BudgetChange.Via.ADMIN
        if change:
            changes = {field: form.cleaned_data[field] for field in form.changed_data if field != "reason"}
            pool_update(pool=obj, actor=request.user, changes=changes, reason=reason, via=via)
        else:
            created = pool_create(
                actor=request.user, name=obj.name, max_verdicts=obj.max_verdicts, reason=reason, via=via
            )
            obj.pk = created.pk


@admin.register(BudgetChange)
class BudgetChangeAdmin(admin.ModelAdmin):
    """The audit log: read only."""

    list_display = ("created_at", "actor", "budget", "pool", "field", "old_value", "new_value", "via", "reason")
    list_filter = ("via", "field")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
