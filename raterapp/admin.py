from django.contrib import admin

from .models import EstimateSnapshot, Experiment, ImpactGroup, Item, Judgement, PairTask, SampledPair


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "scheme", "status", "items_count", "created_at")
    list_filter = ("status", "scheme")
    search_fields = ("name", "description")
    readonly_fields = ("status", "progress", "error", "items_count", "dropped_items", "impact", "population_file")


@admin.register(Judgement)
class JudgementAdmin(admin.ModelAdmin):
    list_display = ("task", "rater", "verdict", "created_at")
    list_filter = ("verdict",)


admin.site.register([Item, SampledPair, PairTask, EstimateSnapshot, ImpactGroup])
