"""HTML forms. They check types only: the services check values and report problems by field."""

from __future__ import annotations

import re
from typing import cast

from django import forms
from django.conf import settings

from raterapp.models import Experiment, UploadedFile
from raterapp.services.experiments.budgets import MAX_REPLICATION
from raterapp.vocabulary import INPUT_COLUMNS, PARAMETER_HELP, input_help

ACCEPT = ".csv,.parquet"


ABOUT_FIELDS = ("name", "kind", "description", "question", "guidelines", "workspace", "reuse_verdicts")
DRAW_FIELDS = ("n_draws", "diff_share", "replication", "confidence", "seed")
REQUEST_FIELDS = ("requested_verdicts", "rating_request")


def _shared_workspace_name(experiment: Experiment) -> str:
    """The experiment's workspace by name; empty for the one it was given of its own (``Experiment.save``
    names it after the experiment), or a new experiment would join the failed one's."""
    if not experiment.workspace_id:
        return ""
    name = experiment.workspace.name
    return "" if re.fullmatch(rf"{re.escape(experiment.name[:150])} \([0-9a-f]{{12}}\)", name) else name


def _file_field(kind: str, *, label: str) -> forms.FileField:
    return forms.FileField(
        label=label,
        required=False,
        help_text=input_help(kind),
        widget=forms.ClearableFileInput(attrs={"accept": ACCEPT}),
    )


class ExperimentCreateForm(forms.Form):
    FILE_KINDS = tuple(UploadedFile.Kind.values)
    file_errors: list[str]  # the service's refusals of the uploads, when it refused them (views/experiments.py)

    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    kind = forms.ChoiceField(
        label="Experiment",
        required=False,
        choices=Experiment.Kind.choices,
        initial=Experiment.Kind.CHANGE,
        help_text=(
            "Absolute quality: upload one clustering as Base (no Exp); the page reports its Precision "
            "and how far its Recall is above MinimumRecall (MQM §5.1)."
        ),
    )
    question = forms.CharField(
        max_length=500,
        initial=Experiment._meta.get_field("question").default,
        help_text="What raters are asked about each pair.",
    )
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Shown to raters beside every pair (plain text).",
    )
    workspace = forms.CharField(
        required=False,
        max_length=200,
        help_text="Experiments of one workspace use one catalogue's item ids and share verdicts; empty: its own.",
    )
    reuse_verdicts = forms.BooleanField(
        required=False,
        initial=True,
        help_text="Pairs already judged in the workspace under the same question and guidelines need no new verdicts.",
    )
    scheme = forms.ChoiceField(
        choices=Experiment.Scheme.choices, initial=Experiment.Scheme.JACCARD, help_text=PARAMETER_HELP["scheme"]
    )
    n_draws = forms.IntegerField(label="Number of draws", initial=2000, help_text=PARAMETER_HELP["n_draws"])
    diff_share = forms.FloatField(label="Diff share", initial=0.5, help_text=PARAMETER_HELP["diff_share"])
    replication = forms.IntegerField(initial=1, help_text=PARAMETER_HELP["replication"])
    seed = forms.IntegerField(required=False, help_text=PARAMETER_HELP["seed"])
    confidence = forms.FloatField(initial=0.95, help_text=PARAMETER_HELP["confidence"])

    items = _file_field("items", label="Items file")
    items_location = forms.CharField(
        label="Or items at a location",
        required=False,
        max_length=1000,
        help_text=(
            "A folder or URL of Parquet files ("
            + INPUT_COLUMNS["items"]
            + ") under one of the server's DATA_LOCATIONS, "
            "for populations too large to upload; prepared on Dask."
        ),
    )
    base = _file_field("base", label="Base clustering")
    exp = _file_field("exp", label="Exp clustering")
    weights = _file_field("weights", label="Weights (optional)")
    catalogue = _file_field("catalogue", label="Catalogue")
    catalogue_location = forms.CharField(
        label="Or the catalogue at a location",
        required=False,
        max_length=1000,
        help_text="With items at a location: a Parquet catalogue under DATA_LOCATIONS; only sampled items are read.",
    )
    ground_truth = _file_field("ground_truth", label="Ground-truth clustering (optional)")
    requested_verdicts = forms.IntegerField(
        label="Budget to ask for (verdicts)",
        required=False,
        min_value=1,
        help_text="The verdicts it needs; an admin grants the budget. Empty: ask for none yet.",
    )
    rating_request = forms.CharField(
        label="Note to the admins",
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Which raters should judge it, by when, why this budget. Admins see it in their console.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not settings.DATA_LOCATIONS:  # the server reads no location: do not offer them
            del self.fields["items_location"]
            del self.fields["catalogue_location"]

    @classmethod
    def from_experiment(cls, experiment: Experiment) -> ExperimentCreateForm:
        """An unbound form filled in with the settings of ``experiment`` (its files are chosen again)."""
        names = (*ABOUT_FIELDS, *DRAW_FIELDS, "scheme", "items_location", "catalogue_location")
        initial = {name: getattr(experiment, name) for name in (*names, *REQUEST_FIELDS) if name != "workspace"}
        initial["workspace"] = _shared_workspace_name(experiment)
        form = cls()
        form.initial = {name: value for name, value in initial.items() if name in form.fields}
        return form

    def about_fields(self) -> list:
        """The fields of the page's "About the experiment" fieldset, in order."""
        return [self[name] for name in ABOUT_FIELDS]

    def request_fields(self) -> list:
        """The page's "Raters and budget" fieldset: what the owner asks admins for."""
        return [self[name] for name in REQUEST_FIELDS]

    def draw_fields(self) -> list:
        """The numbers of the sample and of the estimates, side by side on the page."""
        return [self[name] for name in DRAW_FIELDS]

    def parameters(self) -> dict:
        """The cleaned non-file fields, as keyword arguments of ``experiment_spec``."""
        parameters = {name: value for name, value in self.cleaned_data.items() if name not in self.FILE_KINDS}
        parameters["kind"] = parameters.get("kind") or Experiment.Kind.CHANGE
        return parameters

    def files_given(self) -> dict:
        """The uploaded files by kind (empty inputs left out)."""
        return {kind: self.cleaned_data[kind] for kind in self.FILE_KINDS if self.cleaned_data.get(kind)}


class BudgetForm(forms.Form):
    """An admin's change to an experiment's judgement budget, from the experiment page."""

    max_verdicts = forms.IntegerField(
        label="Maximum verdicts", min_value=0, required=False, help_text="Empty: no limit."
    )
    replication = forms.IntegerField(label="Verdicts per pair", min_value=1, max_value=MAX_REPLICATION)
    cost_per_verdict = forms.DecimalField(label="Cost per verdict", min_value=0, max_digits=12, decimal_places=4)
    paused = forms.BooleanField(label="Paused: raters get no pairs", required=False)
    reason = forms.CharField(label="Why", max_length=2000, help_text="Written to the audit log.")


class ApiTokenForm(forms.Form):
    """A new API token: what it is for, and for how many days it works."""

    name = forms.CharField(label="What it is for", max_length=100, required=False, help_text="E.g. nightly export.")
    ttl_days = forms.IntegerField(
        label="Days it works", min_value=1, max_value=366, help_text="It stops working after this; revoke it sooner."
    )


# ---- the admin console -------------------------------------------------------------------------

GOLD_ANSWER_CHOICES = [("equivalent", "Equivalent"), ("not_equivalent", "Not equivalent")]


class GoldPairForm(forms.Form):
    """A gold question from any two items of the experiment."""

    item_a = forms.CharField(label="First item id", max_length=255)
    item_b = forms.CharField(label="Second item id", max_length=255)
    answer = forms.ChoiceField(label="Answer", choices=GOLD_ANSWER_CHOICES, widget=forms.RadioSelect)


class GoldRateForm(forms.Form):
    gold_rate = forms.FloatField(
        label="Gold rate", help_text="Share of a rater's pairs that are gold questions, 0 to 0.5 (0: none)."
    )


class GoldAnswerForm(forms.Form):
    answer = forms.ChoiceField(label="Answer", choices=GOLD_ANSWER_CHOICES)


class ReportResolveForm(forms.Form):
    RESOLUTIONS = [
        ("kept", "Keep the pair as it is"),
        ("excluded", "Exclude the pair: no rater gets it any more"),
        ("gold_equivalent", "Make it a gold question: equivalent"),
        ("gold_not_equivalent", "Make it a gold question: not equivalent"),
    ]

    resolution = forms.ChoiceField(label="What to do", choices=RESOLUTIONS, widget=forms.RadioSelect)
    note = forms.CharField(
        label="Note",
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="What was wrong and what you did.",
    )

    def service_arguments(self) -> dict:
        choice = self.cleaned_data["resolution"]
        if choice.startswith("gold_"):
            return {"resolution": "gold", "answer": choice.removeprefix("gold_"), "note": self.cleaned_data["note"]}
        return {"resolution": choice, "note": self.cleaned_data["note"]}


class AssignRatersForm(forms.Form):
    """Several raters assigned to an experiment at once."""

    raters = forms.TypedMultipleChoiceField(label="Raters", coerce=int, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, raters=(), **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["raters"]).choices = [(r.pk, r.get_username()) for r in raters]


class ConsoleBudgetForm(forms.Form):
    """The verdicts an experiment may spend, set from the admin console."""

    max_verdicts = forms.IntegerField(label="Verdicts it may spend", min_value=0, max_value=2**31 - 1)
    reason = forms.CharField(label="Why", max_length=2000, help_text="Written to the audit log.")


class PoolCreateForm(forms.Form):
    name = forms.CharField(label="Name", max_length=200)
    max_verdicts = forms.IntegerField(label="Verdicts it pays for", min_value=0, max_value=2**31 - 1)
    reason = forms.CharField(label="Why", max_length=2000, help_text="Written to the audit log.")


class PoolAttachForm(forms.Form):
    experiment = forms.TypedChoiceField(label="Experiment", coerce=int)
    reason = forms.CharField(label="Why", max_length=2000, help_text="Written to the audit log.")

    def __init__(self, *args, experiments=(), **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["experiment"]).choices = [("", "Choose an experiment")] + [
            (e.pk, e.name) for e in experiments
        ]


class PoolEditForm(forms.Form):
    """A pool's new name or size, from the console."""

    name = forms.CharField(label="New name", max_length=200)
    max_verdicts = forms.IntegerField(label="New size: verdicts it pays for", min_value=0, max_value=2**31 - 1)
    reason = forms.CharField(label="Why the change", max_length=2000, help_text="Written to the audit log.")
