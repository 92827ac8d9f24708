"""Running out of memory while reading is the machine's problem, not the file's: the readers let
it through instead of reporting an unreadable file (raterapp then names the memory limit)."""

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from metrics_core.io import read_items


def out_of_memory(*args, **kwargs):
    raise pa.ArrowMemoryError("realloc of size 8388608 failed")


def test_a_parquet_read_out_of_memory_is_no_input_error(tmp_path, monkeypatch):
    path = tmp_path / "items.parquet"
    pq.write_table(pa.table({"item_id": ["a", "b"], "base_cluster": ["1", "1"], "exp_cluster": ["1", "2"]}), path)
    monkeypatch.setattr(pq, "read_table", out_of_memory)
    monkeypatch.setattr(pq.ParquetFile, "read", out_of_memory)  # the column-by-column reader's way
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", out_of_memory)
    with pytest.raises(MemoryError, match="realloc of size 8388608 failed"):
        read_items(str(path))


def test_a_csv_read_out_of_memory_is_no_input_error(tmp_path, monkeypatch):
    path = tmp_path / "items.csv"
    path.write_text("item_id,base_cluster,exp_cluster\na,1,1\nb,1,2\n")
    monkeypatch.setattr(pcsv, "read_csv", out_of_memory)
    with pytest.raises(MemoryError, match="realloc of size 8388608 failed"):
        read_items(str(path))
