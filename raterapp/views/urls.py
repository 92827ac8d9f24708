"""URLs of the server-rendered pages."""

from django.urls import path

from .experiments import ExperimentCreatePageView, ExperimentListPageView, ExperimentPageView

urlpatterns = [
    path("experiments/", ExperimentListPageView.as_view(), name="experiment-list"),
    path("experiments/new/", ExperimentCreatePageView.as_view(), name="experiment-new"),
    path("experiments/<int:experiment_id>/", ExperimentPageView.as_view(), name="experiment-detail"),
]
