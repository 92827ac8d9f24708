"""How Celery routes, acknowledges and serialises the tasks and rides out a broker outage."""

from raterapp import task_names

# Two queues, so that an hour-long preparation never holds up the one-second refreshes of the
# dashboards: docker-compose.yml runs one worker per queue; the demo and the end-to-end tests
# run one worker that consumes both. A task not named here goes to "live".
PREPARATION_TASKS = [task_names.EXPERIMENT_PREPARE, task_names.SAMPLE_BATCH_DRAW]
LIVE_TASKS = [
    task_names.ESTIMATES_REFRESH,
    task_names.DERIVED_REFRESH,
    task_names.RATER_AGREEMENT_REFRESH,
    task_names.RATER_AGREEMENT_ALL_REFRESH,
    task_names.RATERS_AUTO_PAUSE,
    task_names.RECONCILE,
    task_names.PREPARATIONS_STALLED_REQUEUE,
]
CELERY_TASK_DEFAULT_QUEUE = "live"
CELERY_TASK_ROUTES = {
    **{name: {"queue": "preparation"} for name in PREPARATION_TASKS},
    **{name: {"queue": "live"} for name in LIVE_TASKS},
}
CELERY_RESULT_BACKEND = None
# A task is acknowledged when it ends, and given back to the broker when its worker process dies
# (killed for memory, say): it runs again rather than being lost. One message at a time per
# process, so that an hour-long preparation holds no other task hostage in its prefetch.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# The worker outlives a broker outage: it reconnects for as long as it takes, and a task running
# when the connection went runs on. Cancelling it would lose the run when Redis comes back without
# its data (the message with it): a preparation then waited for the stall reconciler and counted
# as interrupted. A message that does come back runs again and finds its work done (the tasks
# are idempotent).
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
