"""Issue 33: the request-time UPLOAD_MAX_EXPANDED_BYTES check counts what dictionary-encoded
Parquet text decodes to, so a file of a few KB that holds megabytes of repeated text is refused
at upload (400, nothing stored), and a file whose text fits passes."""

import io
import re

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from raterapp.models import Experiment, UploadedFile
from tests.raterapp.services.files import parquet_bytes, tiny_files, upload

LIMIT = 5_000_000
LONG = "x" * 1000


def dictionary_parquet(columns: dict, **options) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink, use_dictionary=True, compression="zstd", **options)
    return sink.getvalue()


def decoded_bytes(data: bytes) -> int:
    """What the file holds in memory once read: every text value's bytes and its 4-byte offset,
    every other value's width (the definition the check uses), computed from the whole table."""
    table = pq.read_table(io.BytesIO(data))
    return sum(_array_bytes(chunk) for column in table.columns for chunk in column.chunks)


def _array_bytes(array: pa.Array) -> int:
    if pa.types.is_list(array.type):
        return _array_bytes(array.flatten())
    if pa.types.is_string(array.type):
        return (pc.sum(pc.binary_length(array)).as_py() or 0) + 4 * len(array)
    return array.nbytes


def post(client, items: bytes):
    """The items with a catalogue of their ids (the request checks that each has a row)."""
    ids = sorted(set(pq.read_table(io.BytesIO(items), columns=["item_id"]).column(0).to_pylist()))
    catalogue = parquet_bytes({"item_id": ids, "title": ids})
    files = tiny_files(items=upload("items.parquet", items), catalogue=upload("catalogue.parquet", catalogue))
    return client.post(
        "/api/experiments/", {"name": "expanded", "n_draws": "50", "seed": "7", **files}, format="multipart"
    )


BOMBS = {
    "one long string, repeated": lambda n: dictionary_parquet(
        {"item_id": [LONG] * n, "base_cluster": ["B"] * n, "exp_cluster": ["E"] * n}
    ),
    "spread over row groups each under the limit": lambda n: dictionary_parquet(
        {"item_id": [LONG] * n, "base_cluster": ["B"] * n, "exp_cluster": ["E"] * n}, row_group_size=n // 10
    ),
    "in a list column": lambda n: dictionary_parquet(
        {"item_id": ["a"] * n, "base_cluster": ["B"] * n, "exp_cluster": ["E"] * n, "tags": [[LONG, LONG]] * n}
    ),
}


@pytest.mark.parametrize("case", BOMBS)
def test_a_small_dictionary_encoded_parquet_that_decodes_past_the_limit_is_refused(client_of, settings, case):
    settings.UPLOAD_MAX_EXPANDED_BYTES = LIMIT
    items = BOMBS[case](20_000)
    assert len(items) < 50_000 and decoded_bytes(items) > 4 * LIMIT  # tens of KB that decode to 20 MB
    response = post(client_of("owner"), items)
    assert response.status_code == 400, response.content
    [problem] = response.json()["files"]
    counted = re.fullmatch(
        r"items: items\.parquet: expands to at least ([\d,]+) bytes, more than the limit of 5,000,000 "
        r"\(UPLOAD_MAX_EXPANDED_BYTES\)",
        problem,
    )
    assert counted, problem
    assert LIMIT < int(counted[1].replace(",", "")) <= decoded_bytes(items)
    assert (Experiment.objects.count(), UploadedFile.objects.count()) == (0, 0)


def test_a_parquet_under_the_limit_passes(client_of, settings):
    settings.UPLOAD_MAX_EXPANDED_BYTES = LIMIT
    n = 20_000
    items = parquet_bytes(
        {"item_id": [f"item-{k}" for k in range(n)], "base_cluster": ["B"] * n, "exp_cluster": ["E"] * n}
    )
    assert decoded_bytes(items) < LIMIT
    response = post(client_of("owner"), items)
    assert response.status_code == 201, response.content


def test_one_long_value_among_short_ones_is_counted_not_assumed_everywhere(client_of, settings):
    """Every row as long as the longest value would be 20 MB; the text really holds 0.3 MB."""
    settings.UPLOAD_MAX_EXPANDED_BYTES = LIMIT
    n = 20_000
    ids = [f"item-{k}" for k in range(n)]  # ids stay short: one past 255 characters is refused apart
    note = ["short"] * (n - 1) + [LONG]
    items = dictionary_parquet({"item_id": ids, "base_cluster": ["B"] * n, "exp_cluster": ["E"] * n, "note": note})
    assert decoded_bytes(items) < LIMIT < n * len(LONG)
    response = post(client_of("owner"), items)
    assert response.status_code == 201, response.content
