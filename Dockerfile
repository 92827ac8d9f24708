FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DATA_DIR=/data
WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY metrics_core ./metrics_core
COPY raterapp ./raterapp
COPY templates ./templates
COPY static ./static
COPY manage.py ./
RUN pip install --no-cache-dir '.[web,dask]' && python manage.py collectstatic --noinput
RUN useradd --create-home rater && mkdir -p /data && chown rater /data
USER rater
EXPOSE 8000
CMD ["gunicorn", "raterapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "120"]
