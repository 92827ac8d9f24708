"""URLs of the server-rendered pages."""

from django.urls import path

from .experiments import ExperimentCreatePageView, ExperimentListPageView, ExperimentPageView
from .rating import JudgePageView, RaterHomePageView

urlpatterns = [
    path("experiments/", ExperimentListPageView.as_view(), name="experiment-list"),
    path("experiments/new/", ExperimentCreatePageView.as_view(), name="experiment-new"),
    path("experiments/<int:experiment_id>/", ExperimentPageView.as_view(), name="experiment-detail"),
    path("rate/", RaterHomePageView.as_view(), name="rate-home"),
    path("rate/<int:experiment_id>/", JudgePageView.as_view(), name="rate-experiment"),
]
