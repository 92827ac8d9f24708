from django.contrib import admin

from .models import (
    EstimateSnapshot,
    Experiment,
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
