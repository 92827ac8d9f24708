"""``estimate``: quality estimates, ΔRecall/IQ and (``--raters``) the rater-aware estimates."""

from __future__ import annotations

import argparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..derived import derived_metrics
from ..derived.assisted import derived_metrics_assisted
from ..estimation import Draws, quality_of_draws
from ..estimation.assisted import assisted_of_draws
from ..estimation.labelled import labelled_draws_by_metric
from ..impact import impact_metrics
from ..io import InputError, JudgementsTable, PairsTable, read_items, read_judgements, read_pairs
from ..io.gold_pairs import read_gold_pairs
from ..io.scores import read_scores_for_pairs
from ..judgements import verdicts_from_judgements
from ..rater_aware import estimate_quality_rater_aware
from ..sampling import PairSample, SampleError
from .common import impact_json, item_positions, known_positions
from .labelled import labelled_of_pairs, with_labelled


def run_estimate(args: argparse.Namespace) -> dict:
    items = read_items(args.items)
    pairs = read_pairs(args.pairs)
    judgements = read_judgements(args.judgements, with_rater=bool(args.raters))
    gold = read_gold_pairs(args.gold) if args.gold else None
    population = items.to_population()
    items = items.without_labels()  # the population holds their codes
    i, j, judged_i, judged_j = np.split(
        items.positions_of(_one_column(pairs.i, pairs.j, judgements.i, judgements.j)),
        np.cumsum([len(pairs)] * 2 + [len(judgements)])[:3],
    )
    i, j = (known_positions(items, pairs.path, name, ids, at, len(pairs)) for name, ids, at in _named(pairs, i, j))
    try:
        sample = PairSample.from_columns(
            population,
            scheme=pairs.scheme,
            i=i,
            j=j,
            draws=pairs.draws,
            pair_class=pairs.pair_class,
            stratum=pairs.stratum,
            repeated=True,
        )
    except SampleError as exc:
        pair = f"pair ({pairs.i[exc.row].as_py()!r}, {pairs.j[exc.row].as_py()!r})"
        raise InputError.at_row(pairs.path, exc.row, f"{pair}: {exc.problem}", n_rows=len(pairs)) from None
    judged_i, judged_j = (
        known_positions(items, judgements.path, name, ids, at, len(judgements))
        for name, ids, at in _named(judgements, judged_i, judged_j)
    )
    verdicts = verdicts_from_judgements(judged_i, judged_j, judgements.verdict)
    labelled = labelled_of_pairs(pairs, sample, i, j, verdicts)  # None: no positions
    pair_scores = _pair_scores(args.scores, pairs, i, j) if args.scores else None
    counts = None if labelled is None else labelled.counts
    # The draws and the estimates at the default horizon serve the derived metrics too.
    draws = Draws.build(population, sample, verdicts, None, counts)
    horizon = sample.n_draws if args.horizon is None else args.horizon
    quality = quality_of_draws(draws, sample.scheme, args.confidence, horizon)
    impact = impact_metrics(population)
    # ΔRecall and IQ, human-only and of the model-assisted inputs: the same bootstrap, the same seed.
    bootstrap = {
        "confidence": args.confidence,
        "recall_base": args.recall_base,
        "recall_base_range": tuple(args.recall_base_range),
        "precision_base": args.precision_base,
        "n_boot": args.n_boot,
        "labelled_draws": counts,
        "draws": draws,
        "exact": impact.metrics,
    }
    derived = derived_metrics(
        population,
        sample,
        verdicts,
        rng=np.random.default_rng(args.seed),
        quality=quality if horizon == sample.n_draws else None,
        **bootstrap,
    )
    result = {
        "scheme": quality.scheme,
        "confidence": quality.confidence,
        "exact": impact_json(impact, items.dropped_items)["metrics"],
        "estimates": quality.as_dict()["estimates"] | {name: e.as_dict() for name, e in derived.estimates.items()},
        "derived": derived.details_dict(),
    }
    if pair_scores is not None:
        scores = _sample_scores(sample, i, j, pair_scores)
        full = draws if counts is None else Draws.build(population, sample, verdicts, None, None)
        assisted = assisted_of_draws(
            draws, full, sample, scores, args.confidence, horizon, args.score_lambda, human=quality
        )
        result["model_assisted"] = assisted.as_dict()
        assisted_derived = derived_metrics_assisted(
            population,
            sample,
            verdicts,
            scores,
            rng=np.random.default_rng(args.seed),
            score_lambda=args.score_lambda,
            full=full,
            human=derived,
            assisted=assisted if horizon == sample.n_draws else None,
            **bootstrap,
        )
        result["model_assisted"]["estimates"] |= assisted_derived.estimates_dict()
    if labelled is not None:
        result = with_labelled(result, sample, labelled)
    if args.raters:
        result["rater_aware"] = _rater_aware_json(
            args, items, population, sample, judged_i, judged_j, judgements, gold, counts
        )
    return result


def _pair_scores(path: str, pairs: PairsTable, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The score of each PAIRS row from SCORES; self pairs are known, not scored (0, never read)."""
    scores = np.zeros(len(pairs))
    other = np.flatnonzero(i != j)
    rows = pa.array(other)
    scores[other] = read_scores_for_pairs(
        path, pairs.i.take(rows), pairs.j.take(rows), pairs_path=pairs.path, pair_rows=other
    )
    return scores


def _sample_scores(sample: PairSample, i: np.ndarray, j: np.ndarray, pair_scores: np.ndarray) -> np.ndarray:
    """Each sample row's score from the PAIRS rows' (concatenated batches repeat a pair: one score)."""
    if len(sample) == len(i):  # no pair repeated: the sample's rows are the file's, in its order
        return pair_scores
    n = max(int(max(i.max(initial=0), j.max(initial=0), sample.i.max(initial=0), sample.j.max(initial=0))) + 1, 1)
    pair_key = np.minimum(i, j).astype(np.int64) * n + np.maximum(i, j)
    order = np.argsort(pair_key)
    sample_key = np.minimum(sample.i, sample.j).astype(np.int64) * n + np.maximum(sample.i, sample.j)
    return pair_scores[order[np.searchsorted(pair_key[order], sample_key)]]


def _one_column(*columns: pa.Array) -> pa.Array:
    """The id columns end to end, so that the items' ids are indexed once for all of them."""
    if len({column.type for column in columns}) > 1:
        columns = tuple(pc.cast(column, pa.large_string()) for column in columns)
    return pa.concat_arrays(list(columns))


def _named(table: PairsTable | JudgementsTable, i: np.ndarray, j: np.ndarray) -> tuple:
    return (("i", table.i, i), ("j", table.j, j))


def _rater_aware_json(args, items, population, sample, judged_i, judged_j, judgements, gold, counts) -> dict:
    """``estimate --raters dawid-skene``: the estimates from the pairs' posteriors and the raters' matrices;
    from the labelled prefix (``counts``, ``None`` without ``positions``) like the estimates beside them."""
    gold_i, gold_j, answers = (np.zeros(0, dtype=np.int64),) * 2 + (np.zeros(0, dtype=object),)
    if gold is not None:
        gold_i, gold_j = (item_positions(items, gold.path, name, getattr(gold, name), len(gold)) for name in ("i", "j"))
        answers = gold.answer
    # A stream of its own, so that the derived metrics' bootstrap is the same with or without it.
    rng = np.random.default_rng(np.random.SeedSequence(args.seed).spawn(2)[1])
    rater = judgements.rater.to_numpy(zero_copy_only=False)
    by_rater = rater != ""  # unsure rows without a rater close a pair and observe no rater
    aware = estimate_quality_rater_aware(
        population,
        sample,
        i=judged_i[by_rater],
        j=judged_j[by_rater],
        verdict=judgements.verdict[by_rater],
        rater=rater[by_rater],
        gold_i=gold_i,
        gold_j=gold_j,
        gold_answer=answers,
        rng=rng,
        n_boot=args.n_boot,
        confidence=args.confidence,
        horizon=args.horizon,
        labelled_draws=counts,
    )
    out = aware.as_dict()
    if counts is not None:  # each estimate's labelled draws, as ``with_labelled`` gives the others
        per_metric = labelled_draws_by_metric(sample, counts, out["estimates"])
        for name, estimate in out["estimates"].items():
            estimate["labelled_draws"] = per_metric[name]
    return out
