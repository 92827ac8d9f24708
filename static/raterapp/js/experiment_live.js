// The experiment page's one poller. While the experiment is being prepared it checks the
// preparation every 2 s (experiment_preparation.js); when the dashboard's event stream is out
// (dashboard.js gives up on it) it also asks for the dashboard every second, every 5 s while
// the tab is hidden. With neither to do, the page sends nothing.

import { fetchDashboard, startDashboard } from "./dashboard.js";
import { preparationSection, preparationWatcher } from "./experiment_preparation.js";

const POLL_MS = 1000;
const PREPARATION_MS = 2000;

const section = preparationSection();
let checkPreparation = section ? preparationWatcher(section) : null;
let nextPreparation = Date.now() + PREPARATION_MS;
let pollDashboard = false;
let timer = 0;

function schedule() {
  if (timer || !(checkPreparation || pollDashboard)) return;
  const hidden = document.hidden && !checkPreparation;
  timer = window.setTimeout(tick, hidden ? 5 * POLL_MS : POLL_MS);
}

async function tick() {
  try {
    if (checkPreparation && Date.now() >= nextPreparation) {
      const again = await checkPreparation();
      if (!again) checkPreparation = null;
      nextPreparation = Date.now() + PREPARATION_MS;
    }
    if (pollDashboard) await fetchDashboard();
  } finally {
    // Whatever one tick met (an answer the page could not draw), the next one is scheduled: the
    // error still reaches the console, and the page keeps following the experiment.
    timer = 0;
    schedule();
  }
}

startDashboard({
  polling() {
    pollDashboard = true;
    schedule();
  },
});
schedule();
