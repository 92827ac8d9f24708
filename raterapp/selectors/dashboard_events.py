"""What the dashboard's live stream sends: the dashboard when its version changed, and only the
convergence points the page has not had yet (:mod:`raterapp.api.events`)."""

from __future__ import annotations

from dataclasses import dataclass

from raterapp.models import Experiment
from raterapp.selectors.convergence import estimate_convergence_get
from raterapp.selectors.dashboard import dashboard_version_get, experiment_dashboard_get


@dataclass(frozen=True)
class DashboardCursor:
    """Where a page is: the last snapshot of its convergence history and its dashboard's version.
    As text (the event's id, the browser's ``Last-Event-ID``): ``<snapshot>/<version>``."""

    snapshot: int
    version: str

    def __str__(self) -> str:
        return f"{self.snapshot}/{self.version}"

    @classmethod
    def parse(cls, text: str) -> DashboardCursor | None:
        """The cursor in ``text``; None for anything else (the page then gets everything)."""
        snapshot, _, version = text.partition("/")
        if not snapshot.isdigit() or not version or len(text) > 200:
            return None
        return cls(int(snapshot), version)


def dashboard_event_get(
    *, experiment: Experiment, cursor: DashboardCursor | None
) -> tuple[dict | None, DashboardCursor]:
    """The event a page at ``cursor`` needs (None while its dashboard is current), and its new cursor.

    Without a cursor: the whole dashboard and the whole convergence history (``reset``); with one,
    the dashboard and the snapshots after the cursor's, appended by the page.
    """
    version = dashboard_version_get(experiment=experiment)
    if cursor is not None and cursor.version == version:
        return None, cursor
    dashboard = experiment_dashboard_get(experiment=experiment)
    after = cursor.snapshot if cursor is not None else None
    convergence = estimate_convergence_get(experiment=experiment, after=after)
    points = convergence["points"]
    last = points[-1]["snapshot"] if points else (after or 0)
    payload = {"dashboard": dashboard, "convergence": {**convergence, "reset": cursor is None}}
    return payload, DashboardCursor(last, dashboard["version"])
