"""The web server's worker class: gunicorn's uvicorn worker (docker-compose.yml, Dockerfile) without
uvicorn's ``server`` header, which tells anyone what serves the app and nothing they need."""

from uvicorn_worker import UvicornWorker as _UvicornWorker


class UvicornWorker(_UvicornWorker):
    CONFIG_KWARGS = {**_UvicornWorker.CONFIG_KWARGS, "server_header": False}
