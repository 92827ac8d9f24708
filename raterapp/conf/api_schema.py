"""The OpenAPI schema's settings (drf-spectacular)."""

SPECTACULAR_SETTINGS = {
    "TITLE": "ABCDE rater API",
    "DESCRIPTION": "Experiments, uploads, impact metrics, sampled pairs, judgements and estimates.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from the drf-spectacular-sidecar package: /api/docs/ works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "PairReportReasonEnum": "raterapp.models.PairReport.Reason",
        "QueueClosedReasonEnum": "raterapp.vocabulary.QueueClosedReason",
    },
}
