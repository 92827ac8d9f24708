"""``compare``: ground-truth measures of a clustering against a gold one."""

from __future__ import annotations

import argparse

from ..external import EXTERNAL_MEASURES, external_measures_from_population
from ..io import read_truth_and_prediction
from ..results import json_number


def run_compare(args: argparse.Namespace) -> dict:
    items = read_truth_and_prediction(args.truth, args.pred)
    measures = external_measures_from_population(items.to_population())
    return {
        "items": len(items),
        "dropped_items": int(items.dropped_items),
        "metrics": {
            name: None if (value := measures[name]) is None else json_number(value) for name in EXTERNAL_MEASURES
        },
    }
