import pytest


@pytest.fixture(autouse=True)
def plain_static_storage(settings):
    """Pages use {% static %}; the manifest storage of production needs collectstatic first."""
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
