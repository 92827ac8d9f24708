"""Database helpers: model instances from rows of written-out SQL (rows) and row locks with their
stand-in on SQLite (locks). The one place that knows the SQL dialect's details. Also the text
columns' lengths, for checks made before writing (fields)."""
