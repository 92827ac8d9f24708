"""Where an experiment may read its items or catalogue from: only under ``DATA_LOCATIONS``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from raterapp.models import Experiment, UploadedFile

Kind = UploadedFile.Kind


def allowed_location_problems(location: str) -> list[str]:
    """A location must be under one of DATA_LOCATIONS: the server reads nothing else it is pointed at."""
    allowed = [prefix for prefix in settings.DATA_LOCATIONS if prefix]
    if not allowed:
        return ["reading from a location is not enabled on this server (DATA_LOCATIONS)"]
    if not any(_location_under(location, prefix) for prefix in allowed):
        return [f"must be under one of: {', '.join(allowed)}"]
    return []


def items_location_problems(
    location: str, files: Mapping[str, Any], experiment_kind: str, catalogue_location: str
) -> list[str]:
    """What is wrong with items at ``location`` given the uploads (file formats aside)."""
    problems = allowed_location_problems(location)
    if experiment_kind != Experiment.Kind.CHANGE:
        problems.append("a location gives the items of a change (item_id, base_cluster, exp_cluster)")
    if set(files) & {Kind.ITEMS, Kind.BASE, Kind.EXP, Kind.WEIGHTS}:
        problems.append("give the items either as a location or as uploaded files, not both")
    if Kind.CATALOGUE not in files and not catalogue_location:
        problems.append("a catalogue file (or location) is required")
    return problems


def catalogue_location_problems(location: str, files: Mapping[str, Any], items_location: str) -> list[str]:
    problems = allowed_location_problems(location)
    if not items_location:
        problems.append("a catalogue location goes with an items location")
    if Kind.CATALOGUE in files:
        problems.append("give the catalogue either as a location or as an uploaded file, not both")
    return problems


def _location_under(location: str, allowed: str) -> bool:
    """Whether ``location`` is ``allowed`` or inside it: same URL scheme and host, and a path whose
    components start with the allowed path's (``/data/locations`` never admits
    ``/data/locations-evil/``; ``..`` and ``.`` components are refused outright)."""
    where, root = urlsplit(location), urlsplit(allowed)
    if (where.scheme.lower(), where.netloc.lower()) != (root.scheme.lower(), root.netloc.lower()):
        return False
    if where.query or where.fragment or "\\" in location or "\x00" in location:
        return False
    parts = [part for part in where.path.split("/") if part]
    if any(part in (".", "..") for part in parts):
        return False
    base = [part for part in root.path.split("/") if part]
    absolute = where.path.startswith("/") == root.path.startswith("/")
    if not (absolute and parts[: len(base)] == base):
        return False
    if where.scheme == "" and where.path.startswith("/"):
        # A local path is what it resolves to: a link inside the allowed folder may lead out of it.
        return _path_under(os.path.realpath(where.path), os.path.realpath(root.path))
    return True


def _path_under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
