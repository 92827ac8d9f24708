"""Refusals that services raise and every interface turns into its answer (the API: raterapp/api/errors.py)."""

from django.db import InterfaceError, OperationalError


class StateConflict(Exception):
    """The action does not fit the current state of what it acts on (HTTP 409), e.g. re-running a
    preparation that is running and healthy."""


# The database out of reach (a restart, a failover, a terminated connection): nothing could be
# stored, and trying again later will do. Every interface answers 503 and every task retries.
DATABASE_OUT_OF_REACH = (OperationalError, InterfaceError)
