"""What a model's columns hold, for checks made before writing to them."""

from __future__ import annotations

from django.db import models


def max_length_of(model: type[models.Model], name: str) -> int:
    """The ``max_length`` of the model's text field ``name``."""
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field) and field.max_length is not None, f"{model.__name__}.{name} is text"
    return field.max_length
