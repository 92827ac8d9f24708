"""The log format: JSON lines a log collector reads without parsing rules."""

JSON_LINE = '{"time": "%(asctime)s", "level": "%(levelname)s", "logger": "%(name)s", "message": %(message)r}'


def logging_config(*, level: str) -> dict:
    """One JSON line per record, to the console, from ``level`` up."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": {
                "()": "logging.Formatter",
                "fmt": JSON_LINE,
            }
        },
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
        "root": {"handlers": ["console"], "level": level},
    }
