// The raters page's dialogs: pause (with a reason), quotas and deactivate, and the changes
// that need none (unpause, reactivate), all through PATCH /api/raters/<id>/.

import { requestJson } from "./http.js";
import { plainMessages, rowElement, say, showErrors, showRow } from "./raters_rows.js";

const config = JSON.parse(document.getElementById("raters-config").textContent);
const raterUrl = (id) => config.rater.replace(/\/0\/$/, `/${id}/`);

// After a change the row is redrawn; focus moves to the button that now stands where the
// pressed one stood.
const SUCCESSOR = { pause: "unpause", unpause: "pause", deactivate: "reactivate", reactivate: "deactivate", quota: "quota" };

let current = null; // { spec, rater, action, trigger, updated }

/** The refused fields, marked beside themselves (red border, aria-invalid); the others cleared. */
function markInvalid(form, names) {
  for (const input of form.querySelectorAll("input, textarea")) {
    const bad = names.includes(input.name);
    input.closest(".field")?.classList.toggle("field--invalid", bad);
    input.toggleAttribute("aria-invalid", bad);
  }
}

function quotaValue(input) {
  const text = input.value.trim();
  return text === "" ? null : Number(text);
}

export const DIALOGS = {
  pause: {
    dialog: document.getElementById("pause-dialog"),
    fill(form, row) {
      form.elements.paused_reason.value = row.paused ? row.paused_reason : "";
    },
    body(form) {
      return { paused: true, paused_reason: form.elements.paused_reason.value };
    },
    invalid(form) {
      return form.elements.paused_reason.value.trim() ? [] : ["paused_reason"];
    },
    check(form) {
      return form.elements.paused_reason.value.trim() ? [] : ["Say why the rater is paused."];
    },
    done: (row) => `${row.username} is paused: no pairs go to them until you unpause them.`,
  },
  quota: {
    dialog: document.getElementById("quota-dialog"),
    fill(form, row) {
      form.elements.daily_quota.value = row.daily_quota === null ? "" : String(row.daily_quota);
      form.elements.total_quota.value = row.total_quota === null ? "" : String(row.total_quota);
      form.elements.quota_reason.value = "";
    },
    body(form) {
      return {
        daily_quota: quotaValue(form.elements.daily_quota),
        total_quota: quotaValue(form.elements.total_quota),
        quota_reason: form.elements.quota_reason.value,
      };
    },
    invalid(form) {
      const numbers = [form.elements.daily_quota, form.elements.total_quota]
        .filter((input) => {
          const value = quotaValue(input);
          return !input.validity.valid || (value !== null && !(Number.isInteger(value) && value >= 0));
        })
        .map((input) => input.name);
      return form.elements.quota_reason.value.trim() ? numbers : [...numbers, "quota_reason"];
    },
    check(form) {
      const labels = { daily_quota: "Verdicts per day", total_quota: "Verdicts in all" };
      return this.invalid(form).map((name) =>
        name === "quota_reason"
          ? "Say why the quotas change."
          : `${labels[name]}: give a whole number of verdicts, 0 or more, or leave the box empty for no limit.`,
      );
    },
    done(row) {
      const daily = row.daily_quota === null ? "no daily limit" : `${row.daily_quota} a day`;
      const total = row.total_quota === null ? "no total limit" : `${row.total_quota} in all`;
      return `Quotas of ${row.username} saved: ${daily}, ${total}.`;
    },
  },
  deactivate: {
    dialog: document.getElementById("deactivate-dialog"),
    fill() {},
    body: () => ({ is_active: false }),
    check: () => [],
    done: (row) => `${row.username} is deactivated and can no longer sign in.`,
  },
};

export function openDialog(action, rater, trigger) {
  const spec = DIALOGS[action];
  const form = spec.dialog.querySelector("form");
  for (const node of spec.dialog.querySelectorAll("[data-dialog-username]")) node.textContent = rater.username;
  spec.fill(form, rater);
  showErrors(spec.dialog.querySelector(".errors"), []);
  markInvalid(form, []);
  current = { spec, rater, action, trigger, updated: false };
  spec.dialog.showModal();
}

for (const [action, spec] of Object.entries(DIALOGS)) {
  const form = spec.dialog.querySelector("form");
  const errors = spec.dialog.querySelector(".errors");
  const submit = form.querySelector("button[type='submit']");
  spec.dialog.querySelector("[data-dialog-cancel]").addEventListener("click", () => spec.dialog.close());
  spec.dialog.addEventListener("close", () => {
    // The close event comes a task later: the dialog may be open again already, for a new change.
    if (spec.dialog.open || !current || current.spec !== spec) return;
    const { rater, updated, trigger } = current;
    current = null;
    if (updated) {
      const button = rowElement(rater.rater)?.querySelector(`[data-action="${SUCCESSOR[action]}"]`);
      if (button) button.focus();
    } else if (trigger && trigger.isConnected) {
      trigger.focus();
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!current || submit.disabled) return;
    const problems = spec.check(form);
    showErrors(errors, problems);
    markInvalid(form, spec.invalid ? spec.invalid(form) : []);
    if (problems.length) {
      errors.focus();
      return;
    }
    submit.disabled = true;
    const result = await requestJson("PATCH", raterUrl(current.rater.rater), spec.body(form));
    submit.disabled = false;
    if (result.status === 200 && result.data) {
      current.updated = true;
      await showRow(result.data);
      spec.dialog.close();
      say(spec.done(result.data));
      return;
    }
    showErrors(errors, plainMessages(result));
    markInvalid(form, Object.keys(result.data || {}).filter((name) => form.elements[name]));
    errors.focus();
  });
}

// Unpause and reactivate undo nothing irreversible: no dialog.
export async function quickChange(action, rater) {
  const body = action === "unpause" ? { paused: false } : { is_active: true };
  const result = await requestJson("PATCH", raterUrl(rater.rater), body);
  if (result.status === 200 && result.data) {
    await showRow(result.data, { focusAction: SUCCESSOR[action] });
    say(action === "unpause" ? `${result.data.username} is unpaused and gets pairs again.` : `${result.data.username} is reactivated and can sign in again.`);
    return;
  }
  say(`${rater.username} was not changed: ${plainMessages(result).join(" ")}`, { error: true });
}
