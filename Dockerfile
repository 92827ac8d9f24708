FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DATA_DIR=/data STATIC_ROOT=/app/staticfiles
WORKDIR /app
# The locked web + dask set, hashes checked (requirements/image.lock; `make lock` refreshes it).
COPY requirements/image.lock ./requirements/
RUN pip install --no-cache-dir --require-hashes -r requirements/image.lock
COPY pyproject.toml README.md LICENSE ./
COPY metrics_core ./metrics_core
COPY raterapp ./raterapp
COPY templates ./templates
COPY static ./static
COPY manage.py ./
# Bytecode for the code every process imports from /app (the working directory, ahead of the
# installed copy): PYTHONDONTWRITEBYTECODE keeps processes from caching it, and without it each
# start compiles ours again (the command line: 0.09 CPU s a run, a fifth of a small `impact`).
RUN python -m compileall -q metrics_core raterapp manage.py
RUN pip install --no-cache-dir --no-deps .
# Static files are baked into the image (STATIC_ROOT, outside the data volume), hashed for
# whitenoise's manifest storage. The settings need a SECRET_KEY to load: this one exists for this
# command only and is not in the image's environment, so a container without its own refuses to start.
RUN SECRET_KEY=collectstatic-build-only DEBUG=false python manage.py collectstatic --noinput
RUN useradd --create-home rater && mkdir -p /data && chown -R rater /data
USER rater
EXPOSE 8000
CMD ["gunicorn", "raterapp.asgi:application", "-k", "raterapp.web_worker.UvicornWorker", "--bind", "0.0.0.0:8000", "--workers", "2", "--timeout", "120"]
