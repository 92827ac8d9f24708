"""Blocks of raterapp/settings.py that read no environment variable, imported by it (every
variable the settings read stays in settings.py, listed in .env.example)."""
