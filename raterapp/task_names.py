"""The Celery tasks' names: what ``raterapp/tasks.py`` registers each task under, what
``conf/celery_queues.py`` routes and what ``services/scheduling.py`` starts. Scheduling finds a
task by its name in Celery's registry, so it need not import the tasks, which import the services
that schedule them: ``grep -rn ESTIMATES_REFRESH raterapp`` finds the task, its queue and who
starts it."""

EXPERIMENT_PREPARE = "raterapp.experiment_prepare"
SAMPLE_BATCH_DRAW = "raterapp.sample_batch_draw"
ESTIMATES_REFRESH = "raterapp.estimates_refresh"
DERIVED_REFRESH = "raterapp.derived_refresh"
RATER_AWARE_REFRESH = "raterapp.rater_aware_refresh"
RATER_AGREEMENT_REFRESH = "raterapp.rater_agreement_refresh"
RATER_AGREEMENT_ALL_REFRESH = "raterapp.rater_agreement_all_refresh"
RATERS_AUTO_PAUSE = "raterapp.raters_auto_pause"
RECONCILE = "raterapp.reconcile"
PREPARATIONS_STALLED_REQUEUE = "raterapp.preparations_stalled_requeue"
