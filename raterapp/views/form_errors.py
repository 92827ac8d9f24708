"""A refused form's errors, for the summary at the top of its page and beside its fields."""

from __future__ import annotations

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError


def error_summary(form) -> list[dict]:
    """The form's errors for the summary at the top: each with the id of its field to link to."""
    rows: list[dict] = []
    for name, errors in form.errors.items():
        if name == NON_FIELD_ERRORS or name not in form.fields:
            rows.extend({"href": "", "text": str(error)} for error in errors)
            continue
        field = form[name]
        radio = getattr(field.field.widget, "input_type", "") == "radio"
        anchor = f"{field.auto_id}_0" if radio else field.auto_id
        rows.extend({"href": f"#{anchor}", "text": f"{field.label}: {error}"} for error in errors)
    return rows


def service_errors(form, exc: ValidationError) -> None:
    """A service's refusal on the form: beside the field it names, or above the form."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for field, errors in exc.message_dict.items():
        form.add_error(field if field in form.fields else None, errors)
