from django.urls import path

from .health import HealthApi

urlpatterns = [
    path("health/", HealthApi.as_view(), name="api-health"),
]
