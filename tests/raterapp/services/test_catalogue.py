import numpy as np
import pyarrow as pa
import pytest

from metrics_core.io import InputError, ItemTable
from raterapp.services.preparation.catalogue import (
    catalogue_attributes_for,
    catalogue_cards_at,
    catalogue_read,
    catalogue_rows_for,
)
from tests.raterapp.services.files import CATALOGUE_CSV, parquet_bytes


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def items_table(ids, **attributes):
    n = len(ids)
    return ItemTable("items.csv", pa.array(ids), pa.array(["1"] * n), pa.array(["1"] * n), np.ones(n), attributes)


def test_cards_default_to_empty_text_and_other_columns_are_attributes(tmp_path):
    catalogue = catalogue_read(path=write(tmp_path, "catalogue.csv", "item_id,title,shop\nb,Beta,s1\na,Alpha,\n"))
    assert catalogue.item_id.to_pylist() == ["b", "a"]
    assert {name: values.to_pylist() for name, values in catalogue.cards.items()} == {
        "title": ["Beta", "Alpha"], "description": ["", ""], "image_url": ["", ""], "url": ["", ""],
    }
    assert {name: values.to_pylist() for name, values in catalogue.attributes.items()} == {"shop": ["s1", ""]}


def test_parquet_attributes_become_text_and_keep_nulls(tmp_path):
    content = parquet_bytes({"item_id": [1, 2], "title": ["A", None], "year": [2020, None], "ok": [True, False]})
    catalogue = catalogue_read(path=write(tmp_path, "catalogue.parquet", content))
    assert catalogue.item_id.to_pylist() == ["1", "2"]
    assert catalogue.cards["title"].to_pylist() == ["A", ""]
    assert {name: values.to_pylist() for name, values in catalogue.attributes.items()} == {"year": ["2020", None], "ok": ["true", "false"]}


def test_rows_for_items_and_their_cards(tmp_path):
    catalogue = catalogue_read(path=write(tmp_path, "catalogue.csv", CATALOGUE_CSV))
    rows = catalogue_rows_for(catalogue=catalogue, item_ids=pa.array(["d", "a"]), items_path="items.csv")
    assert rows.tolist() == [3, 0]
    assert catalogue_cards_at(catalogue=catalogue, rows=rows) == {
        "title": ["Delta", "Alpha"], "description": ["", "The first"],
        "image_url": ["", "https://img.example/a.png"], "url": ["", "https://example.org/a"],
    }


def test_attributes_for_items_come_from_both_files(tmp_path):
    catalogue = catalogue_read(path=write(tmp_path, "catalogue.csv", CATALOGUE_CSV))
    items = items_table(["c", "a"], batch=pa.array([7, 8]))
    rows = catalogue_rows_for(catalogue=catalogue, item_ids=items.item_id, items_path="items.csv")
    attributes = catalogue_attributes_for(catalogue=catalogue, rows=rows, items=items)
    assert {name: values.to_pylist() for name, values in attributes.items()} == {"batch": ["7", "8"], "colour": ["blue", "red"]}


def test_the_first_missing_item_is_named(tmp_path):
    catalogue = catalogue_read(path=write(tmp_path, "catalogue.csv", CATALOGUE_CSV))
    with pytest.raises(InputError) as missing:
        catalogue_rows_for(catalogue=catalogue, item_ids=pa.array(["a", "zz", "yy"]), items_path="items.csv")
    assert str(missing.value) == f"{tmp_path}/catalogue.csv: no row for item_id 'zz' of items.csv"


@pytest.mark.parametrize(
    "content, problem",
    [
        ("item_id,title,base\na,A,x\n", "column 'base' is reserved: rename it"),
        ("item_id,title\na,A\na,B\n", "line 3: duplicate item_id 'a' (first on line 2)"),
        ("item_id,title\n,A\n", "line 2: empty item_id"),
        ("item_id\na\n", "missing column 'title' (columns found: 'item_id')"),
    ],
)
def test_bad_catalogues(tmp_path, content, problem):
    path = write(tmp_path, "catalogue.csv", content)
    with pytest.raises(InputError) as refused:
        catalogue_read(path=path)
    assert str(refused.value) == f"{path}: {problem}"


def test_nested_columns_are_refused(tmp_path):
    path = write(tmp_path, "catalogue.parquet", parquet_bytes({"item_id": ["a"], "title": ["A"], "tags": [["x", "y"]]}))
    with pytest.raises(InputError) as refused:
        catalogue_read(path=path)
    assert str(refused.value) == f"{path}: column 'tags' has type list<element: string>; expected text"
