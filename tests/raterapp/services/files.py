"""Upload files for the pipeline tests: the four-item example of the papers and its catalogue."""

import contextlib
import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from django.core.files.uploadedfile import SimpleUploadedFile

# Base {a,b,c},{d}; Exp {a,b},{c,d}: SplitDistance 7/24, MergeDistance 3/16 (JDD's example).
ITEMS_CSV = "item_id,base_cluster,exp_cluster\na,B1,E1\nb,B1,E1\nc,B1,E2\nd,B2,E2\n"
CATALOGUE_CSV = (
    "item_id,title,description,image_url,url,colour\n"
    "a,Alpha,The first,https://img.example/a.png,https://example.org/a,red\n"
    "b,Beta,,,,red\n"
    "c,Gamma,,,,blue\n"
    "d,Delta,,,,blue\n"
    "e,Epsilon,,,,green\n"
)


def upload(name: str, content: str | bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode() if isinstance(content, str) else content)


def parquet_bytes(columns: dict) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def tiny_files(**replace: SimpleUploadedFile | None) -> dict[str, SimpleUploadedFile]:
    """items.csv and catalogue.csv of the example; a keyword replaces (or with None, drops) one."""
    files = {"items": upload("items.csv", ITEMS_CSV), "catalogue": upload("catalogue.csv", CATALOGUE_CSV), **replace}
    return {kind: file for kind, file in files.items() if file is not None}


def experiment_made(*, owner, files: dict, checked: bool = True, **parameters):
    """``experiment_create`` with its spec checked by ``experiment_spec``, as the API and the page do.

    ``checked=False``: without the request's check of the files' first rows (``upload_checks``), so
    that a tiny bad file reaches the preparation as a large file bad past its first rows does: for
    tests of the preparation's own checks."""
    from unittest import mock

    from raterapp.services.experiments.create import experiment_create
    from raterapp.services.experiments.spec import experiment_spec

    unchecked = mock.patch("raterapp.services.experiments.spec.upload_content_problems", return_value=[])
    with contextlib.nullcontext() if checked else unchecked:
        spec = experiment_spec(files=files, **parameters)
    return experiment_create(owner=owner, spec=spec, files=files)


def random_files(tmp_path, *, n: int = 300, seed: int = 5) -> tuple[dict, str]:
    """n items in about n/6 Base clusters; Exp moves a fifth of them. Returns the uploads and the items path."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, n // 6, n)
    exp = np.where(rng.random(n) < 0.2, rng.integers(0, n // 6, n), base)
    lines = ["item_id,base_cluster,exp_cluster"] + [f"i{k},b{base[k]},e{exp[k]}" for k in range(n)]
    path = tmp_path / "items.csv"
    path.write_text("\n".join(lines) + "\n")
    catalogue = "item_id,title,shop\n" + "".join(f"i{k},Item {k},s{k % 3}\n" for k in range(n))
    return {"items": upload("items.csv", path.read_text()), "catalogue": upload("catalogue.csv", catalogue)}, str(path)
