// The admins' rater page: actions on each row (pause / unpause with a reason, quotas,
// deactivate / reactivate, a new password link) and the new-rater form, all through
// /api/raters/. The server renders the rows (raters_rows.js); the dialogs are in
// raters_dialogs.js, the new-rater form and the links in raters_new.js.

import { DIALOGS, openDialog, quickChange } from "./raters_dialogs.js";
import { passwordLink } from "./raters_new.js";
import { fillAllActions, raters, tbody } from "./raters_rows.js";

tbody.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button || button.disabled) return;
  const rater = raters.get(Number(button.closest("tr").dataset.rater));
  if (!rater) return;
  const action = button.dataset.action;
  if (DIALOGS[action]) {
    openDialog(action, rater, button);
  } else if (action === "password") {
    button.disabled = true;
    passwordLink(rater).finally(() => {
      button.disabled = false;
    });
  } else {
    button.disabled = true;
    quickChange(action, rater).finally(() => {
      button.disabled = false;
    });
  }
});

fillAllActions();
