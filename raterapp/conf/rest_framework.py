"""Django REST framework's classes for the API; settings.py adds the rates, which come from the
environment."""

REST_FRAMEWORK_CLASSES = {
    # The token first: DRF answers a request without credentials with the first class's
    # WWW-Authenticate challenge, 401 (with the session first, which has none, it was 403).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "raterapp.api.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "raterapp.api.limits.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_PARSER_CLASSES": [
        "raterapp.api.limits.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Anonymous callers by address, signed-in users per user, and per user the views of a
    # throttle_scope (raterapp/api/judging.py, raterapp/api/raters.py).
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
        "rest_framework.throttling.ScopedRateThrottle",
    ],
    "EXCEPTION_HANDLER": "raterapp.api.errors.api_exception_handler",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "raterapp.api.renderers.BrowsableAPIRenderer",
    ],
}
