"""The API's one error path (raterapp/api/errors.py): each refusal a service raises, raised from a
view, becomes the same status and body wherever it comes from."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.test import override_settings
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.test import APIClient
from rest_framework.views import APIView

from raterapp.exceptions import StateConflict
from raterapp.services.judging.errors import JudgementRefused

REFUSALS = {
    "field": (ValidationError({"budget": "Give a positive number."}), 400, {"budget": ["Give a positive number."]}),
    "fields": (
        ValidationError({"a": ["One.", "Two."], "b": "Three."}),
        400,
        {"a": ["One.", "Two."], "b": ["Three."]},
    ),
    "plain": (ValidationError("Not in that state."), 400, {"non_field_errors": ["Not in that state."]}),
    "list": (ValidationError(["First.", "Second."]), 400, {"non_field_errors": ["First.", "Second."]}),
    "refused": (PermissionDenied("Only admins change budgets."), 403, {"detail": "Only admins change budgets."}),
    "conflict": (StateConflict("The preparation is running."), 409, {"detail": "The preparation is running."}),
    "judgement": (JudgementRefused("You already judged this pair."), 409, {"detail": "You already judged this pair."}),
    "missing": (Http404("No such experiment."), 404, {"detail": "No such experiment."}),
}


class RaisingApi(APIView):
    permission_classes = [AllowAny]

    def get(self, request, name):
        raise REFUSALS[name][0]


urlpatterns = [path("raise/<str:name>/", RaisingApi.as_view())]


@pytest.mark.parametrize("name", list(REFUSALS))
@override_settings(ROOT_URLCONF=__name__)
def test_each_service_refusal_answers_its_status_and_body(db, name):
    _, status, body = REFUSALS[name]
    response = APIClient().get(f"/raise/{name}/")
    assert response.status_code == status
    assert response.json() == body


@override_settings(ROOT_URLCONF=__name__)
def test_any_other_exception_is_not_turned_into_an_answer(db):
    REFUSALS["boom"] = (RuntimeError("boom"), None, None)
    try:
        with pytest.raises(RuntimeError, match="boom"):
            APIClient().get("/raise/boom/")
    finally:
        del REFUSALS["boom"]
