from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied, ValidationError
from django.template.defaultfilters import pluralize

from .access import RATER, ROLES
from .models import (
    ApiToken,
    AuditEntry,
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
    QuestionVersion,
    RaterProfile,
    RetractedJudgement,
    ReusedVerdict,
    SampledPair,
    Workspace,
)

SERVICE_OWNED_FIELDS = (
    "kind",
    "scheme",
    "n_draws",
    "diff_share",
    "replication",
    "seed",
    "confidence",
    "gold_rate",
    "target_half_width",
    "decision_metric",
    "equivalence_margin",
    "open_to_all_raters",
    "sample_version",
    "archived_at",
    "engine",
    "items_location",
    "catalogue_location",
    "ground_truth_metrics",
    "error_id",
    "error_step",
    "heartbeat_at",
    "preparation_attempts",
)


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "scheme", "status", "items_count", "gold_rate", "created_at")
    list_filter = ("status", "scheme")
    search_fields = ("name", "description")
    # What the services own is read-only here: their changes write the audit log and keep the
    # tasks in step (replication and PairTask.wanted through budget_update, the target and
    # decision through the dashboard, raters through experiment_raters_set, the sample's
    # parameters never change after creation).
    readonly_fields = (
        "status",
        "progress",
        "error",
        "items_count",
        "dropped_items",
        "impact",
        "population_file",
        *SERVICE_OWNED_FIELDS,
    )
    filter_horizontal = ("shared_with", "assigned_raters")

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "assigned_raters":
            kwargs["queryset"] = get_user_model().objects.filter(groups__name=RATER).order_by("username")
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_related(self, request, form, formsets, change):
        """Assigned raters change through the rater service, which releases the live leases
        of raters the experiment is no longer open to."""
        from raterapp.services.accounts.raters import experiment_raters_set

        raters = form.cleaned_data.pop("assigned_raters", None)
        super().save_related(request, form, formsets, change)
        if raters is not None:
            current = set(form.instance.assigned_raters.values_list("pk", flat=True))
            if current != {user.pk for user in raters}:
                experiment_raters_set(actor=request.user, experiment=form.instance, rater_ids=[u.pk for u in raters])


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
    list_display = ("task", "rater", "verdict", "judged_at", "retracted_at", "voided_by")
    readonly_fields = ("task", "rater", "verdict", "comment", "client_id", "judged_at", "retracted_at", "voided_by")


class RaterProfileForm(forms.ModelForm):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), help_text="Why the quotas change: written to the audit log."
    )


@admin.register(RaterProfile)
class RaterProfileAdmin(admin.ModelAdmin):
    """Quotas are edited here; pause, unpause and deactivation go through the actions (the
    rater services: they release the rater's live leases and remember when a pause was lifted)."""

    list_display = ("user", "user_active", "daily_quota", "total_quota", "paused", "paused_at", "paused_reason")
    list_filter = ("paused", "user__is_active")
    search_fields = ("user__username", "user__email")
    readonly_fields = ("user", "paused", "paused_reason", "paused_at", "unpaused_at")
    fields = ("user", "daily_quota", "total_quota", "reason", "paused", "paused_reason", "paused_at", "unpaused_at")
    form = RaterProfileForm
    actions = ("pause_selected", "unpause_selected", "deactivate_selected")

    @admin.display(boolean=True, description="Active", ordering="user__is_active")
    def user_active(self, profile):
        return profile.user.is_active

    def has_add_permission(self, request):
        return False  # raters are created with their profile (POST /api/raters/)

    def save_model(self, request, obj, form, change):
        from raterapp.services.accounts.raters import rater_quota_set

        rater_quota_set(
            actor=request.user,
            rater=obj.user,
            daily_quota=obj.daily_quota,
            total_quota=obj.total_quota,
            reason=form.cleaned_data["reason"],
        )

    @admin.action(description="Pause selected raters")
    def pause_selected(self, request, queryset):
        from raterapp.services.accounts.raters import rater_pause

        reason = f"Paused by {request.user.get_username()} in the Django admin."
        self._each(request, queryset, lambda user: rater_pause(actor=request.user, rater=user, reason=reason), "paused")

    @admin.action(description="Unpause selected raters")
    def unpause_selected(self, request, queryset):
        from raterapp.services.accounts.raters import rater_unpause

        self._each(request, queryset, lambda user: rater_unpause(actor=request.user, rater=user), "unpaused")

    @admin.action(description="Deactivate selected raters (their verdicts stay)")
    def deactivate_selected(self, request, queryset):
        from raterapp.services.accounts.raters import rater_deactivate

        self._each(request, queryset, lambda user: rater_deactivate(actor=request.user, rater=user), "deactivated")

    def _each(self, request, queryset, action, done: str) -> None:
        count = 0
        for profile in queryset.select_related("user"):
            try:
                action(profile.user)
            except (PermissionDenied, ValidationError) as exc:
                self.message_user(request, f"{profile.user}: {_message(exc)}", level=messages.ERROR)
            else:
                count += 1
        if count:
            self.message_user(request, f"{count} rater{pluralize(count)} {done}.", level=messages.SUCCESS)


def _message(exc: Exception) -> str:
    return "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)


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
        from raterapp.services.experiments.budgets import budget_update

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
        from raterapp.services.experiments.budgets import pool_create, pool_update

        reason, via = form.cleaned_data["reason"], BudgetChange.Via.ADMIN
        if change:
            changes = {field: form.cleaned_data[field] for field in form.changed_data if field != "reason"}
            pool_update(pool=obj, actor=request.user, changes=changes, reason=reason, via=via)
        else:
            created = pool_create(
                actor=request.user, name=obj.name, max_verdicts=obj.max_verdicts, reason=reason, via=via
            )
            obj.pk = created.pk


class ReadOnlyAdmin(admin.ModelAdmin):
    """An audit log: shown, never added to, changed nor deleted here."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(BudgetChange)
class BudgetChangeAdmin(ReadOnlyAdmin):
    """The audit log: read only."""

    list_display = ("created_at", "actor", "budget", "pool", "field", "old_value", "new_value", "via", "reason")
    list_filter = ("via", "field")


class RoleAuditedUserAdmin(UserAdmin):
    """Role groups change through ``user_roles_set``, which writes the audit log; other groups
    as usual. Deactivating a user revokes their API tokens, as the raters page does."""

    def save_model(self, request, obj, form, change):
        from raterapp.services.accounts.api_tokens import api_tokens_revoke_all

        super().save_model(request, obj, form, change)
        if change and "is_active" in form.changed_data and not obj.is_active:
            api_tokens_revoke_all(actor=request.user, user=obj)

    def save_related(self, request, form, formsets, change):
        from raterapp.services.accounts.users import user_roles_set

        groups = form.cleaned_data.get("groups")
        if groups is None:
            return super().save_related(request, form, formsets, change)
        roles = [group.name for group in groups if group.name in ROLES]
        kept = list(form.instance.groups.filter(name__in=ROLES)) if change else []
        form.cleaned_data["groups"] = [group for group in groups if group.name not in ROLES] + kept
        super().save_related(request, form, formsets, change)
        try:
            user_roles_set(actor=request.user, user=form.instance, roles=roles, reason="Django admin")
        except (PermissionDenied, ValidationError) as exc:
            self.message_user(request, f"Roles not changed: {_message(exc)}", level=messages.ERROR)


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), RoleAuditedUserAdmin)


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """The audit log of people and access: read only."""

    list_display = ("created_at", "action", "subject", "actor", "experiment", "field", "old_value", "new_value")
    list_filter = ("action",)
    search_fields = ("subject__username", "actor__username", "reason")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """API tokens (never their keys: only hashes are stored); revoke with the action."""

    list_display = ("prefix", "user", "name", "created_at", "expires_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("user__username", "name", "prefix")
    fields = list_display
    readonly_fields = list_display
    actions = ("revoke_selected",)

    def has_add_permission(self, request):
        return False  # made by their user (the key is shown to them once) or manage.py token_create

    @admin.action(description="Revoke selected tokens")
    def revoke_selected(self, request, queryset):
        from raterapp.services.accounts.api_tokens import api_token_revoke

        for token in queryset:
            try:
                api_token_revoke(actor=request.user, token=token)
            except PermissionDenied as exc:
                self.message_user(request, f"{token}: {exc}", level=messages.ERROR)


@admin.register(Workspace)
class WorkspaceAdmin(ReadOnlyAdmin):
    """Experiments that share item ids and so verdicts (abcde-spec §11): made by experiment creation."""

    list_display = ("name", "created_at")
    search_fields = ("name",)


@admin.register(QuestionVersion)
class QuestionVersionAdmin(ReadOnlyAdmin):
    """A question and its guidelines, as verdicts are stored against them: a change is a new version."""

    list_display = ("digest", "question", "created_at")
    search_fields = ("question",)


@admin.register(ReusedVerdict)
class ReusedVerdictAdmin(ReadOnlyAdmin):
    """Which verdict of the workspace answers which task: recorded when the pair is sampled."""

    list_display = ("experiment", "task", "source", "created_at")
    list_select_related = ("experiment", "task", "source")
