"""A demo experiment on real records: Febrl dataset 3 (see raterapp/demo_data/README.md).

Two plausible record-linkage clusterings of the 5,000 person records, each the connected
components of a few exact-match rules: Base links records that agree on surname and date
of birth, or on given name and suburb; Exp links records that share a social-security id,
or given name and surname, or date of birth and street number. Exp finds many more true
duplicates (good merges) at the price of some bad merges, and splits a few of Base's
clusters, rightly or wrongly: JaccardDistance ≈ 0.19, ΔPrecision ≈ −1.6%. The true
entity of a record is the number in its ``rec_id``, so simulated raters can answer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

FEBRL3 = Path(__file__).resolve().parent.parent / "demo_data" / "febrl3.csv"
NAME_FIELDS = ("given_name", "surname")


def febrl_records(path: Path = FEBRL3) -> pa.Table:
    """The records with whitespace-trimmed text columns and their true entity."""
    table = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(column_types={}, strings_can_be_null=False))
    table = table.rename_columns([name.strip() for name in table.column_names])
    columns = {name: pc.utf8_trim_whitespace(table[name].cast(pa.string())) for name in table.column_names}
    entity = pc.struct_field(pc.extract_regex(columns["rec_id"], r"rec-(?P<n>\d+)-"), [0])
    return pa.table({**columns, "entity": entity})


def demo_clusterings(records: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Base (strict) and Exp (looser) cluster labels of each record."""
    base_rules = [("surname", "date_of_birth"), ("given_name", "suburb")]
    exp_rules = [("soc_sec_id",), ("given_name", "surname"), ("date_of_birth", "street_number")]
    base = _components(len(records), [_key(records, fields) for fields in base_rules])
    exp = _components(len(records), [_key(records, fields) for fields in exp_rules])
    return base, exp


def _key(records: pa.Table, fields: tuple[str, ...]) -> np.ndarray:
    """One string per record joining ``fields``; None where any field is empty (no link)."""
    values = [records[f].to_numpy(zero_copy_only=False).astype(str) for f in fields]
    joined = np.array(["\x1f".join(parts) for parts in zip(*values)], dtype=object)
    empty = np.zeros(len(records), dtype=bool)
    for column in values:
        empty |= column == ""
    joined[empty] = None
    return joined


def _components(n: int, keys: list[np.ndarray]) -> np.ndarray:
    """Connected components of the graph linking records that share any key."""
    parent = np.arange(n)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for key in keys:
        first: dict[str, int] = {}
        for record, value in enumerate(key):
            if value is None:
                continue
            other = first.setdefault(value, record)
            root_a, root_b = find(record), find(other)
            if root_a != root_b:
                parent[max(root_a, root_b)] = min(root_a, root_b)
    return np.array([find(x) for x in range(n)])


DEMO_NAME = "Febrl 3: strict rules vs looser rules"
# The demo's experiments are on one catalogue (Febrl 3's record ids): they share verdicts (abcde-spec §11).
DEMO_WORKSPACE = "Febrl 3 demo"
# rater1-3 are simulated; "rater" is for the person trying the judging page (the simulation
# would otherwise answer the pair they hold, as it asks for the next pair in their name).
DEMO_USERS = {
    "engineer": "engineer",
    "admin": "admin",
    "rater": "rater",
    "rater1": "rater",
    "rater2": "rater",
    "rater3": "rater",
}
SIMULATED_RATERS = ("rater1", "rater2", "rater3")
DEMO_PASSWORD = "abcde-demo"


def demo_files_write(*, folder: Path) -> dict[str, Path]:
    """The demo's items (clusterings), catalogue (item cards) and ground-truth clustering (the true
    entities, which calibrate the estimates) as CSV files in ``folder``."""
    records = febrl_records()
    base, exp = demo_clusterings(records)
    folder.mkdir(parents=True, exist_ok=True)
    text = {name: records[name].to_pylist() for name in records.column_names}
    items = pa.table(
        {
            "item_id": text["rec_id"],
            "base_cluster": [f"b{k}" for k in base],
            "exp_cluster": [f"e{k}" for k in exp],
        }
    )
    catalogue = demo_catalogue(records)
    ground_truth = pa.table({"item_id": text["rec_id"], "cluster_id": text["entity"]})
    paths = {
        "items": folder / "items.csv",
        "catalogue": folder / "catalogue.csv",
        "ground_truth": folder / "ground_truth.csv",
    }
    pcsv.write_csv(items, paths["items"])
    pcsv.write_csv(catalogue, paths["catalogue"])
    pcsv.write_csv(ground_truth, paths["ground_truth"])
    return paths


def demo_catalogue(records: pa.Table) -> pa.Table:
    """The demo's item cards: a person's name as the title, the address as the description, and
    date of birth, social security id and state as attributes (what raters compare)."""
    text = {name: records[name].to_pylist() for name in records.column_names}
    address = [
        ", ".join(part for part in (f"{n} {a1}".strip(), a2, f"{s} {p}".strip(), st.upper()) if part)
        for n, a1, a2, s, p, st in zip(
            text["street_number"], text["address_1"], text["address_2"], text["suburb"], text["postcode"], text["state"]
        )
    ]
    return pa.table(
        {
            "item_id": text["rec_id"],
            "title": [f"{g} {s}".strip().title() or "(no name)" for g, s in zip(text["given_name"], text["surname"])],
            "description": address,
            "date_of_birth": text["date_of_birth"],
            "soc_sec_id": text["soc_sec_id"],
            "state": [s.upper() for s in text["state"]],
        }
    )


def demo_truth() -> dict[str, str]:
    """The true entity of each demo item id."""
    records = febrl_records()
    return dict(zip(records["rec_id"].to_pylist(), records["entity"].to_pylist()))


def demo_users_ensure(*, password: str) -> dict:
    """The demo's users (user name -> User), each in the group of its role. Those made now get
    ``password``; those made before keep theirs, since setting it again would sign out every
    session open on the demo (each ``make demo`` calls this, and so do the simulated raters)."""
    from django.contrib.auth.models import Group, User

    users = {}
    for username, role in DEMO_USERS.items():
        user, created = User.objects.get_or_create(username=username, defaults={"is_staff": role == "admin"})
        if created:
            user.set_password(password)
            user.save(update_fields=["password"])
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        users[username] = user
    return users


def demo_experiment_ensure(
    *, owner, folder: Path, n_draws: int = 600, scheme: str = "jaccard", replication: int = 1, opened_by=None
):
    """The demo experiment: created (and queued for preparation) on the first call, reused after.

    With ``opened_by`` (an admin), a new demo experiment is opened to every rater with an
    unlimited budget, as that admin would do it, whatever ``NEW_EXPERIMENT_OPEN_TO`` and
    ``NEW_EXPERIMENT_BUDGET`` say: the demo is for rating at once.
    """
    from django.core.files import File

    from raterapp.models import Experiment
    from raterapp.services.experiments.create import experiment_create
    from raterapp.services.experiments.spec import experiment_spec

    existing = Experiment.objects.filter(name=DEMO_NAME, owner=owner).first()
    if existing is not None:
        return existing, False
    paths = demo_files_write(folder=folder)
    with (
        open(paths["items"], "rb") as items,
        open(paths["catalogue"], "rb") as catalogue,
        open(paths["ground_truth"], "rb") as ground_truth,
    ):
        files = {
            "items": File(items, name="items.csv"),
            "catalogue": File(catalogue, name="catalogue.csv"),
            "ground_truth": File(ground_truth, name="ground_truth.csv"),
        }
        spec = experiment_spec(
            files=files,
            name=DEMO_NAME,
            description=(
                "Febrl dataset 3 (5,000 person records, 2,000 people). Base: exact match on surname and date of "
                "birth, or given name and suburb. Exp: social-security id, or given name and surname, or date of "
                "birth and street number."
            ),
            question="Do these two records describe the same person?",
            guidelines=(
                "Records may contain typos, swapped or missing fields. Answer Equivalent when both records describe "
                "one person, Not equivalent when they describe two people, Unsure when you cannot tell."
            ),
            scheme=scheme,
            n_draws=n_draws,
            replication=replication,
            seed=7,
            workspace=DEMO_WORKSPACE,
        )
        experiment = experiment_create(owner=owner, spec=spec, files=files)
    if opened_by is not None:
        _demo_experiment_open(experiment, admin=opened_by)
    return experiment, True


def _demo_experiment_open(experiment, *, admin) -> None:
    from raterapp.models import BudgetChange
    from raterapp.selectors.budgets import budget_get
    from raterapp.services.accounts.raters import experiment_raters_set
    from raterapp.services.experiments.budgets import budget_update

    experiment_raters_set(actor=admin, experiment=experiment, rater_ids=[], open_to_all=True)
    budget_update(
        budget=budget_get(experiment=experiment),
        actor=admin,
        changes={"max_verdicts": None},
        reason="The demo: every rater, no limit.",
        via=BudgetChange.Via.ADMIN,
    )


def demo_raters_simulate(
    *, experiment, raters: list, rng: np.random.Generator, unsure_rate: float = 0.05, pace: float = 0.0, limit=None
) -> int:
    """Raters answer from the true entities (unsure now and then) until the queue is empty.

    Returns the number of verdicts submitted. ``pace`` seconds pass between verdicts.
    """
    import time
    import uuid

    from raterapp.services.judging import assignment_next, judgement_submit

    truth = demo_truth()
    submitted = 0
    idle = 0
    while idle < len(raters) and (limit is None or submitted < limit):
        rater = raters[submitted % len(raters)] if idle == 0 else raters[(submitted + idle) % len(raters)]
        task = assignment_next(experiment=experiment, rater=rater)
        if task is None:
            idle += 1
            continue
        idle = 0
        same = truth[task.item_a.item_id] == truth[task.item_b.item_id]
        verdict = "unsure" if rng.random() < unsure_rate else ("equivalent" if same else "not_equivalent")
        judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
        submitted += 1
        if pace:
            time.sleep(pace)
    return submitted
