"""Model instances read by one plain query. The rating loop's lookups (the token's or session's
user with their roles, the experiment or task a rater may judge) are written out in SQL: on those
requests the ORM took longer to build each query than PostgreSQL took to answer it.

:func:`table` names a model's table and :func:`columns` its columns under a table alias;
:func:`instance_from_row` turns those columns of a fetched row back into an instance, through the
fields' own converters (a JSON field's text becomes its value), as the ORM would. Columns left out
are deferred.
"""

from __future__ import annotations

from functools import cache

from django.db import DEFAULT_DB_ALIAS, connection


@cache
def _fields(model, leave_out: tuple[str, ...]) -> tuple:
    return tuple(field for field in model._meta.concrete_fields if field.attname not in leave_out)


@cache
def _converters(model, leave_out: tuple[str, ...]) -> tuple:
    converted = []
    for field in _fields(model, leave_out):
        column = field.get_col(model._meta.db_table)
        converters = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        converted.append((column, tuple(converters)))
    return tuple(converted)


@cache
def _attnames(model, leave_out: tuple[str, ...]) -> frozenset[str]:
    """The columns read, as ``Model.from_db`` looks them up (once per model field when some are deferred)."""
    return frozenset(field.attname for field in _fields(model, leave_out))


def table(model) -> str:
    """``model``'s table, quoted for SQL."""
    return connection.ops.quote_name(model._meta.db_table)


def columns(model, alias: str, *, leave_out: tuple[str, ...] = ()) -> str:
    """The SQL select list of ``model``'s concrete fields (but ``leave_out``, by attribute name)
    on the table aliased ``alias``, in the order :func:`instance_from_row` reads them."""
    quote = connection.ops.quote_name
    return ", ".join(f"{alias}.{quote(field.column)}" for field in _fields(model, leave_out))


def column_count(model, *, leave_out: tuple[str, ...] = ()) -> int:
    return len(_fields(model, leave_out))


def instance_from_row(model, values, *, leave_out: tuple[str, ...] = ()):
    """An instance of ``model`` from ``values``, a row's slice read with :func:`columns`."""
    row = []
    for (column, converters), value in zip(_converters(model, leave_out), values, strict=True):
        for converter in converters:
            value = converter(value, column, connection)
        row.append(value)
    return model.from_db(DEFAULT_DB_ALIAS, _attnames(model, leave_out), row)
