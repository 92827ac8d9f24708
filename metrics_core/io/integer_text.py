"""Text ids that are integers: read as int64 when that loses nothing.

CSV cells are text, and ``"007"`` and ``"7"`` are distinct ids. A column of text is read as
integers only when every cell is the canonical decimal of an int64, the text that writing the
integer gives back (``"7"``, ``"-12"``; not ``"007"``, ``"+7"``, ``"-0"``, ``" 7"`` or
``"0x7"``): then every id's text is recovered exactly from its integer, and two ids are equal as
integers exactly when they are equal as text. Any other column stays text.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def canonical_integers(values: pa.Array) -> pa.Array | None:
    """``values`` (text without nulls) as int64 when every one is an integer written canonically, else None.

    Examples
    --------
    >>> canonical_integers(pa.array(["7", "-12", "0"])).to_pylist()
    [7, -12, 0]
    >>> [canonical_integers(pa.array(["7", text])) for text in ("007", "+7", "-0", "0x10", "7.0", "a")]
    [None, None, None, None, None, None]
    """
    if len(values) == 0 or values.null_count:
        return None
    try:
        integers = pc.cast(values, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    # Arrow parses "007", "-0" and hexadecimal "0x10" too: only the integer's own text is kept.
    written = pc.cast(integers, values.type)
    return integers if pc.all(pc.equal(written, values)).as_py() else None
