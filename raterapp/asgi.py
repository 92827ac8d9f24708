"""The web server's entry point: gunicorn with uvicorn workers (docker-compose.yml), uvicorn alone
in the demo. Django serves every view under ASGI; only the dashboard's live stream
(:mod:`raterapp.api.events`) is asynchronous, the sync views run in a thread per request."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "raterapp.settings")
# Each request's sync code runs in a thread of its own, so a persistent connection per thread
# would never be reused: a pool per process instead (settings.py, DB_POOL).
if not os.environ.get("DB_POOL"):  # unset or empty (.env.example's DB_POOL=)
    os.environ["DB_POOL"] = "true"
application = get_asgi_application()
