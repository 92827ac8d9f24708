// The pair explorer: the sampled pairs behind the dashboard's numbers, filtered and ordered, the
// clusters that carry most of the change, and one pair at a time with both items and their
// Base and Exp clusters.
//
// Contract: /api/experiments/<id>/explorer/pairs/ (paginated list; ?format=csv|json downloads
// every matching pair), .../explorer/pairs/<id>/ and .../explorer/clusters/?side=base|exp.
// The filters, the order and the page live in the query string (a reload or a shared link
// shows the same pairs); an open pair lives in the hash, #pair-<id>.
//
// Item data is untrusted: it is written with textContent only (cards.js), and only http(s)
// addresses become links or images.

//
// This module: the filters, the list and its order; explorer_clusters.js the clusters,
// explorer_detail.js one pair, explorer_format.js the words and numbers.

import { el } from "./cards.js";
import { requestJson } from "./http.js";
import { loadClusters, markActiveCluster } from "./explorer_clusters.js";
import { onDetailClosed, openFromHash } from "./explorer_detail.js";
import { CLASS_NAMES, VERDICT_NAMES, badge, counts, number, percent, problemOf, scoreText, titleOf } from "./explorer_format.js";
import { DEFAULT_ORDERING, FILTERS, ORDERINGS, SEARCH_DELAY_MS, config, root, shareOfJd, state, ui } from "./explorer_state.js";

// ---------------------------------------------------------------- filters and the address

function filterParams() {
  const params = new URLSearchParams();
  for (const name of FILTERS) {
    const value = state.filters[name];
    if (value) params.set(name, value);
  }
  // A slice needs both halves; without a value the attribute alone filters nothing yet.
  if (!state.filters.value) params.delete("attribute");
  if (!state.filters.attribute) params.delete("value");
  if (!state.filters.cluster) params.delete("side");
  return params;
}

function readForm() {
  const data = new FormData(ui.form);
  const filters = {};
  for (const name of FILTERS) {
    const value = data.get(name);
    if (typeof value === "string" && value.trim()) filters[name] = name === "q" || name === "cluster" ? value.trim() : value;
  }
  return filters;
}

function writeForm() {
  for (const name of FILTERS) {
    const field = ui.form.elements.namedItem(name);
    if (!field) continue;
    if (field.type === "checkbox") field.checked = state.filters[name] === "true";
    else field.value = state.filters[name] || "";
  }
  fillSliceValues();
}

function fillSliceValues() {
  const values = (config.slices || {})[ui.attribute.value] || [];
  ui.values.replaceChildren(...values.map((value) => el("option", { attrs: { value } })));
  ui.value.disabled = !ui.attribute.value;
  ui.value.placeholder = ui.attribute.value ? (values.length ? "Type or pick a value" : "Type a value") : "Choose a slice first";
}

function readAddress() {
  const params = new URLSearchParams(window.location.search);
  state.filters = {};
  for (const name of FILTERS) if (params.get(name)) state.filters[name] = params.get(name);
  const ordering = params.get("ordering");
  state.ordering = ORDERINGS.includes(ordering) ? ordering : DEFAULT_ORDERING;
  const offset = Number.parseInt(params.get("offset") || "0", 10);
  state.offset = Number.isFinite(offset) && offset > 0 ? offset : 0;
}

function writeAddress() {
  const params = filterParams();
  if (state.ordering !== DEFAULT_ORDERING) params.set("ordering", state.ordering);
  if (state.offset) params.set("offset", String(state.offset));
  const query = params.toString();
  const url = `${window.location.pathname}${query ? `?${query}` : ""}${window.location.hash}`;
  window.history.replaceState(window.history.state, "", url);
}

function updateDownloads() {
  const params = filterParams();
  params.set("ordering", state.ordering);
  for (const link of ui.downloads) {
    params.set("format", link.dataset.download);
    link.href = `${config.urls.pairs}?${params}`;
  }
}

function apply(filters) {
  state.filters = filters;
  state.offset = 0;
  loadPairs();
  markActiveCluster();
}

// ---------------------------------------------------------------- the list

function setLoading(loading) {
  root.dataset.state = loading ? "loading" : root.dataset.state;
  ui.tableWrap.setAttribute("aria-busy", String(loading));
  ui.tableWrap.classList.toggle("xp-table-wrap--loading", loading);
}

async function loadPairs() {
  const request = ++state.request;
  setLoading(true);
  writeAddress();
  updateDownloads();
  showSort();
  const params = filterParams();
  params.set("ordering", state.ordering);
  params.set("limit", String(config.pageSize));
  params.set("offset", String(state.offset));
  const result = await requestJson("GET", `${config.urls.pairs}?${params}`);
  if (request !== state.request) return; // a newer request answers for the screen
  setLoading(false);
  if (result.status !== 200 || !result.data || !Array.isArray(result.data.results)) {
    showListError(problemOf(result, "pairs"));
    return;
  }
  if (!result.data.results.length && result.data.count > 0 && state.offset > 0) {
    state.offset = 0; // past the last page (the address was edited, or pairs were filtered away)
    loadPairs();
    return;
  }
  ui.error.hidden = true;
  state.data = result.data;
  renderPairs();
}

function showListError(message) {
  root.dataset.state = "error";
  ui.errorText.textContent = message;
  ui.error.hidden = false;
  ui.summary.textContent = "The pairs could not be loaded.";
  ui.rows.replaceChildren();
  ui.tableWrap.hidden = true;
  ui.empty.hidden = true;
  ui.pager.hidden = true;
}

function filtersActive() {
  return [...filterParams().keys()].length > 0;
}

function renderPairs() {
  const { count, results } = state.data;
  root.dataset.state = "ready";
  const first = state.offset + 1;
  const last = state.offset + results.length;
  const filtered = filtersActive() ? " matching the filters" : "";
  ui.summary.textContent = count
    ? `${counts.format(count)} pair${count === 1 ? "" : "s"}${filtered}; showing ${counts.format(first)}–${counts.format(last)}.`
    : `No pairs${filtered}.`;
  ui.tableWrap.hidden = !results.length;
  ui.empty.hidden = results.length > 0;
  if (!results.length) {
    ui.emptyText.textContent = filtersActive()
      ? "No sampled pair passes these filters. Try another class, verdict or cluster, or clear the filters."
      : "This experiment's sample has no pairs to show here (self pairs are hidden: tick “Show self pairs”).";
  }
  ui.rows.replaceChildren(...results.map(pairRow));
  ui.pager.hidden = count <= config.pageSize;
  ui.page.textContent = `Page ${Math.floor(state.offset / config.pageSize) + 1} of ${Math.max(1, Math.ceil(count / config.pageSize))}`;
  const focused = document.activeElement;
  ui.prev.disabled = state.offset === 0;
  ui.next.disabled = last >= count;
  if (focused === ui.prev && ui.prev.disabled) ui.next.focus();
  if (focused === ui.next && ui.next.disabled) ui.prev.focus();
}

function pairRow(row) {
  const tr = el("tr", { attrs: { "data-pair-id": String(row.id) } });
  const pair = el("th", { className: "xp-cell-pair", attrs: { scope: "row" } });
  const link = el("a", { className: "xp-pair-link", attrs: { href: `#pair-${row.id}` } });
  link.append(
    el("span", { className: "xp-pair-link__item", text: titleOf(row.i_title, row.i) }),
    el("span", { className: "xp-pair-link__sep", text: " ↔ ", attrs: { "aria-hidden": "true" } }),
    el("span", { className: "visually-hidden", text: " and " }),
    el("span", { className: "xp-pair-link__item", text: titleOf(row.j_title, row.j) }),
  );
  pair.append(link, el("span", { className: "xp-ids", text: `${row.i} ↔ ${row.j}` }));

  const kind = cell("Class", badge(row.pair_class, CLASS_NAMES));
  const verdict = cell("Verdict", badge(row.verdict, VERDICT_NAMES));
  if (row.task !== null) verdict.firstChild.append(el("span", { className: "xp-counts", text: verdictCounts(row) }));
  const draws = cell("Draws", counts.format(row.draws));
  draws.classList.add("num");
  const contribution = cell("Contribution", number(row.jaccard_contribution));
  contribution.classList.add("num");
  const share = shareOfJd(row.jaccard_contribution);
  if (share !== null && row.jaccard_contribution > 0) {
    contribution.firstChild.append(el("span", { className: "xp-share", text: `${percent(share)} of JD` }));
  }
  const agreement = cell("Agreement", percent(row.agreement));
  agreement.classList.add("num");
  const score = cell("Score", scoreText(row));
  score.classList.add("num");
  if (row.score_source === "uploaded") score.firstChild.append(el("span", { className: "xp-share", text: "yours" }));
  tr.append(pair, kind, verdict, draws, contribution, agreement, score);
  return tr;
}

// A cell whose content sits in one box: on phones the row is a card, label left, value right.
function cell(label, content) {
  const td = el("td", { attrs: { "data-label": label } });
  const value = el("span", { className: "xp-value" });
  value.append(content);
  td.append(value);
  return td;
}

function verdictCounts(row) {
  const given = row.equivalent + row.not_equivalent + row.unsure;
  const parts = [
    [row.equivalent, "equivalent"],
    [row.not_equivalent, "not equivalent"],
    [row.unsure, "unsure"],
  ].filter(([n]) => n > 0).map(([n, name]) => `${n} ${name}`);
  const of = `${given} of ${row.wanted} verdict${row.wanted === 1 ? "" : "s"}`;
  return parts.length > 1 ? `${parts.join(", ")} · ${of}` : of;
}

// ---------------------------------------------------------------- ordering and pages

const SORT_FLIP = {
  jaccard_contribution: ["-jaccard_contribution", "jaccard_contribution"],
  draws: ["-draws", "draws"],
  score: ["-score", "score"],
};

function showSort() {
  for (const button of ui.sortButtons) {
    const [descending, ascending] = SORT_FLIP[button.dataset.sort];
    const th = button.closest("th");
    const sort = state.ordering === descending ? "descending" : state.ordering === ascending ? "ascending" : "none";
    th.setAttribute("aria-sort", sort);
  }
  if (ui.sortSelect) ui.sortSelect.value = state.ordering;
}

function sortBy(column) {
  const [descending, ascending] = SORT_FLIP[column];
  state.ordering = state.ordering === descending ? ascending : descending;
  state.offset = 0;
  loadPairs();
}

function turnPage(step) {
  const count = state.data ? state.data.count : 0;
  const offset = state.offset + step * config.pageSize;
  if (offset < 0 || offset >= count) return;
  state.offset = offset;
  loadPairs();
}

// ---------------------------------------------------------------- start

let searchTimer = 0;

function start() {
  readAddress();
  writeForm();
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    window.clearTimeout(searchTimer);
    apply(readForm());
  });
  ui.form.addEventListener("change", (event) => {
    if (event.target === ui.attribute) {
      ui.value.value = "";
      fillSliceValues();
      if (ui.attribute.value) {
        ui.value.focus();
        return; // the slice filters once it has a value
      }
    }
    if (event.target.tagName === "SELECT" || event.target.type === "checkbox") apply(readForm());
  });
  ui.form.addEventListener("input", (event) => {
    if (event.target.tagName !== "INPUT" || event.target.type === "checkbox") return;
    window.clearTimeout(searchTimer);
    searchTimer = window.setTimeout(() => apply(readForm()), SEARCH_DELAY_MS);
  });
  for (const button of root.querySelectorAll("[data-clear]")) {
    button.addEventListener("click", () => {
      state.filters = {};
      writeForm();
      apply({});
      ui.form.elements.namedItem("pair_class").focus();
    });
  }
  ui.retry.addEventListener("click", () => loadPairs());
  ui.prev.addEventListener("click", () => turnPage(-1));
  ui.next.addEventListener("click", () => turnPage(1));
  for (const button of ui.sortButtons) button.addEventListener("click", () => sortBy(button.dataset.sort));
  if (ui.sortSelect) {
    ui.sortSelect.addEventListener("change", () => {
      state.ordering = ui.sortSelect.value;
      state.offset = 0;
      loadPairs();
    });
  }
  // A click anywhere on a row opens its pair, like its link does.
  ui.rows.addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-pair-id]");
    if (!row || event.target.closest("a") || window.getSelection().toString()) return;
    window.location.hash = `pair-${row.dataset.pairId}`;
  });
  ui.detailClose.addEventListener("click", () => ui.detail.close());
  ui.detail.addEventListener("close", onDetailClosed);
  ui.detail.addEventListener("click", (event) => {
    if (event.target === ui.detail) ui.detail.close(); // a click on the backdrop
  });
  window.addEventListener("hashchange", openFromHash);

  loadPairs();
  const clusterEvents = {
    onJaccardDistance: () => state.data && renderPairs(),
    onChoose(filters) {
      state.filters = filters;
      writeForm();
      apply(filters);
    },
  };
  loadClusters("base", clusterEvents);
  loadClusters("exp", clusterEvents);
  openFromHash();
}

start();
