"""Moving the test database to a migration and back, for the tests of data migrations on a
database in use. Migrations are found by name: they get renumbered when branches meet."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migration_named(suffix: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """(raterapp's migration whose name ends with ``suffix``, the one before it)."""
    graph = MigrationExecutor(connection).loader.graph
    (node,) = [key for key in graph.nodes if key[0] == "raterapp" and key[1].endswith(suffix)]
    (parent,) = [key for key in graph.node_map[node].parents if key[0] == "raterapp"]
    return node, parent


@contextmanager
def back_to_latest() -> Iterator[None]:
    """Whatever the block migrates to, the database ends at the latest migration again."""
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes("raterapp")[0]
    try:
        yield
    finally:
        migrate(latest)


def migrate(target):
    """Migrate to ``target``; the models (historical) as they are there."""
    MigrationExecutor(connection).migrate([target])
    return MigrationExecutor(connection).loader.project_state(target).apps
