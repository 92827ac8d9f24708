"""What live pages listen to: one Redis channel per experiment, on which the worker says that
something of the experiment's dashboard changed (a new estimates snapshot, new derived metrics).

The dashboard's stream (:mod:`raterapp.api.events`) takes any message as "re-read the dashboard";
the message itself (the snapshot's JSON for estimates) is for other listeners.
"""

from __future__ import annotations

import json
import logging

from django.conf import settings

logger = logging.getLogger(__name__)


def experiment_channel(experiment_id: int) -> str:
    """The experiment's Redis channel (``REDIS_CHANNEL_PREFIX`` keeps test workers apart)."""
    return f"{settings.REDIS_CHANNEL_PREFIX}experiment:{experiment_id}:estimates"


def experiment_change_publish(*, experiment_id: int, message: dict) -> None:
    """Publish ``message`` on the experiment's channel; without Redis (the embedded demo), nothing:
    the pages poll there."""
    if not settings.REDIS_URL:
        return
    import redis

    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
        client.publish(experiment_channel(experiment_id), json.dumps(message))
    except Exception as exc:  # what changed is stored; live pages catch up on the next message
        logger.warning("change of experiment %s not published: %s", experiment_id, exc)
