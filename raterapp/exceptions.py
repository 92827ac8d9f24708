"""Refusals that services raise and every interface turns into its answer (the API: raterapp/api/errors.py)."""


class StateConflict(Exception):
    """The action does not fit the current state of what it acts on (HTTP 409), e.g. re-running a
    preparation that is running and healthy."""
