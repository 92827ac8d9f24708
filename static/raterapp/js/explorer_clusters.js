// The pair explorer's cluster lists: the Base and Exp clusters that carry most of the change
// (GET .../explorer/clusters/?side=), each a button that filters the pairs to its own.

import { el } from "./cards.js";
import { requestJson } from "./http.js";
import { SIDE_NAMES, counts, number, percent, problemOf } from "./explorer_format.js";
import { CLUSTERS_SHOWN, config, root, shareOfJd, state, ui } from "./explorer_state.js";

export async function loadClusters(side, { onJaccardDistance, onChoose }) {
  const list = ui.clusters[side];
  const result = await requestJson("GET", `${config.urls.clusters}?side=${side}&limit=${CLUSTERS_SHOWN}`);
  if (result.status !== 200 || !result.data || !Array.isArray(result.data.clusters)) {
    list.replaceChildren(el("li", { className: "xp-clusters__note xp-clusters__note--error", text: problemOf(result, "clusters") }));
    return;
  }
  if (result.data.jaccard_distance !== null && state.jaccardDistance === null) {
    state.jaccardDistance = result.data.jaccard_distance;
    onJaccardDistance(); // each pair's share of JD can show now
  }
  const clusters = result.data.clusters.filter((cluster) => cluster.contribution > 0);
  if (!clusters.length) {
    list.replaceChildren(el("li", { className: "xp-clusters__note", text: `No ${SIDE_NAMES[side]} cluster changed.` }));
    return;
  }
  const largest = clusters[0].contribution;
  list.replaceChildren(...clusters.map((cluster) => clusterItem(side, cluster, largest, onChoose)));
  markActiveCluster();
}

function clusterItem(side, cluster, largest, onChoose) {
  const item = el("li");
  const button = el("button", {
    className: "xp-cluster",
    attrs: { type: "button", "data-side": side, "data-label": cluster.label, "aria-pressed": "false" },
  });
  const head = el("span", { className: "xp-cluster__head" });
  head.append(
    el("span", { className: "visually-hidden", text: `Show the pairs of ${SIDE_NAMES[side]} cluster ` }),
    el("code", { className: "xp-cluster__label", text: cluster.label }),
    el("span", { className: "xp-cluster__share", text: `${percent(shareOfJd(cluster.contribution))} of JD` }),
  );
  const bar = el("span", { className: "xp-bar", attrs: { "aria-hidden": "true" } });
  const fill = el("span", { className: "xp-bar__fill" });
  fill.style.width = `${Math.max(2, (100 * cluster.contribution) / largest)}%`;
  bar.append(fill);
  const meta = el("span", {
    className: "xp-cluster__meta",
    text: `${counts.format(cluster.items)} items, ${counts.format(cluster.affected_items)} affected · split ${number(cluster.SplitDistance)} · merge ${number(cluster.MergeDistance)}`,
  });
  button.append(head, bar, meta);
  button.addEventListener("click", () => onChoose(chosenFilters(side, cluster.label)));
  item.append(button);
  return item;
}


/** The filters after a click on a cluster: its pairs, or all again if it was chosen. */
function chosenFilters(side, label) {
  const active = state.filters.cluster === label && state.filters.side === side;
  const filters = { ...state.filters };
  if (active) {
    delete filters.cluster;
    delete filters.side;
  } else {
    filters.cluster = label;
    filters.side = side;
  }
  return filters;
}

export function markActiveCluster() {
  for (const button of root.querySelectorAll(".xp-cluster")) {
    const active = state.filters.cluster === button.dataset.label && state.filters.side === button.dataset.side;
    button.setAttribute("aria-pressed", String(active));
  }
}
