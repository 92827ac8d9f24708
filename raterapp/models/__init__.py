"""The records of the rating loop: experiments, their items and sampled pairs, judgements, estimates.

Bulk data (the whole population of an experiment) lives in a normalised Parquet file
in the media storage, the canonical input of metrics_core; the database holds what is
queried and updated transactionally: the items of sampled pairs, the pairs and their
judgement tasks, the verdicts and the estimate snapshots.
"""

from .budgets import AppendOnly, BudgetChange, BudgetLedgerEntry, BudgetPool, ExperimentBudget, LedgerQuerySet
from .estimates import DerivedEstimate, EstimateSnapshot, ImpactGroup, RaterAgreement, RaterAwareEstimate
from .experiments import (
    PREPARATION_STEPS,
    PREPARING,
    Experiment,
    Item,
    QuestionVersion,
    SampleBatch,
    UploadedFile,
    Verdict,
    Workspace,
    new_experiment_open_to_all,
    upload_path,
)
from .judgements import Judgement, PairReport, RaterProfile, RaterVerdictCount, RetractedJudgement, ReusedVerdict
from .operations import ApiToken, AuditEntry, OutboxMessage
from .pairs import ExperimentProgress, Lease, PairTask, PairTaskQuerySet, SampledPair, sampled_q

__all__ = [
    "PREPARATION_STEPS",
    "PREPARING",
    "ApiToken",
    "AppendOnly",
    "AuditEntry",
    "BudgetChange",
    "BudgetLedgerEntry",
    "BudgetPool",
    "DerivedEstimate",
    "EstimateSnapshot",
    "Experiment",
    "ExperimentBudget",
    "ExperimentProgress",
    "ImpactGroup",
    "Item",
    "Judgement",
    "Lease",
    "LedgerQuerySet",
    "OutboxMessage",
    "PairReport",
    "PairTask",
    "PairTaskQuerySet",
    "QuestionVersion",
    "RaterAgreement",
    "RaterAwareEstimate",
    "RaterProfile",
    "RaterVerdictCount",
    "RetractedJudgement",
    "ReusedVerdict",
    "SampleBatch",
    "SampledPair",
    "UploadedFile",
    "Verdict",
    "Workspace",
    "new_experiment_open_to_all",
    "sampled_q",
    "upload_path",
]
