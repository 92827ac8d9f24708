"""What several browser test modules share: the rating page opened and read, an experiment whose truth
is known judged by a rater, and the upload files of an experiment made in the browser."""

from __future__ import annotations

import csv
import re
import uuid

import numpy as np

from raterapp.services.judging import assignment_next, judgement_submit

from .conftest import record_problems, serve_portraits

# ---- the rating page (tests/browser/test_judging.py) ----------------------------------------

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
VERDICT_OF_KEY = {
    "1": "equivalent",
    "e": "equivalent",
    "2": "not_equivalent",
    "n": "not_equivalent",
    "3": "unsure",
    "u": "unsure",
}
JUDGE = "document.getElementById('judge')"


def _open_page(browser, live_server, problems, *, dialogs=None):
    context = browser.new_context(viewport=LAPTOP)
    serve_portraits(context)
    page = context.new_page()
    page.set_default_timeout(15_000)
    record_problems(page, problems, expected=lambda url: url.startswith("https://img.example/5."))  # missing on purpose
    if dialogs is not None:
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return context, page


def _sign_in(page, live_server, username, password, *, lands_on):
    """Signs in from the front door, which sends a rater on to their page; Enter submits."""
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url
    page.get_by_label("User name", exact=True).fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_label("Password", exact=True).press("Enter")
    page.wait_for_url(re.compile(lands_on))


def _task_on_screen(page) -> int:
    page.wait_for_function(f"{JUDGE}.dataset.state === 'pair'")
    return int(page.evaluate(f"{JUDGE}.dataset.task"))


def _wait_for_other_task(page, task: int) -> int:
    page.wait_for_function(f"{JUDGE}.dataset.state !== 'pair' || {JUDGE}.dataset.task !== '{task}'")
    return _task_on_screen(page)


# ---- an experiment whose truth is known (tests/browser/test_decision.py) ----------------------


def _population(n=240, seed=3):
    """Base over-merges pairs of true clusters and splits some items off; Exp puts about half of
    the items back in their true cluster: a clear improvement."""
    rng = np.random.default_rng(seed)
    gold = np.arange(n) // 4
    base = np.where(rng.random(n) < 0.25, gold + 1000, gold // 2)
    exp = np.where(rng.random(n) < 0.5, gold + 5000, base)
    return base.tolist(), exp.tolist(), gold


def _judge(experiment, gold, rater, limit=None):
    k = 0
    while (limit is None or k < limit) and (task := assignment_next(experiment=experiment, rater=rater)) is not None:
        same = gold[task.item_a.position] == gold[task.item_b.position]
        verdict = "unsure" if k % 11 == 10 else "equivalent" if same else "not_equivalent"
        judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
        k += 1
    return k


# ---- an experiment uploaded in the browser (tests/browser/test_experiment_upload.py) ----------

READY_TIMEOUT_MS = 120_000


def _files(tmp_path) -> tuple[str, str]:
    """60 items in 12 Base clusters; Exp splits some and merges others."""
    items, catalogue = tmp_path / "items.csv", tmp_path / "catalogue.csv"
    with open(items, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["item_id", "base_cluster", "exp_cluster", "weight"])
        for k in range(60):
            base = k // 5
            exp = base if base % 3 else (k // 10) * 100 + (k % 2)
            writer.writerow([f"item-{k:03d}", f"B{base}", f"E{exp}", 1 + (k % 3) / 2])
    with open(catalogue, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["item_id", "title", "description", "colour"])
        for k in range(60):
            writer.writerow([f"item-{k:03d}", f"Product {k}", f"<b>not bold</b> {k}", ["red", "blue"][k % 2]])
    return str(items), str(catalogue)
