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

import { el, renderCard } from "./cards.js";
import { requestJson } from "./http.js";

const config = JSON.parse(document.getElementById("explorer-config").textContent);
const root = document.getElementById("explorer");
const $ = (selector) => root.querySelector(selector);

const FILTERS = ["pair_class", "verdict", "attribute", "value", "cluster", "side", "q", "include_self"];
const ORDERINGS = ["-jaccard_contribution", "jaccard_contribution", "-draws", "draws", "pair_class"];
const DEFAULT_ORDERING = "-jaccard_contribution";
const CLASS_NAMES = { split: "Split", merge: "Merge", intersection: "Intersection", self: "Self" };
const VERDICT_NAMES = {
  unjudged: "Not judged",
  equivalent: "Equivalent",
  not_equivalent: "Not equivalent",
  unsure: "Unsure",
  mixed: "Mixed",
  self: "Self pair",
};
const SIDE_NAMES = { base: "Base", exp: "Exp" };
const OTHER_SIDE = { base: "exp", exp: "base" };
const CLUSTERS_SHOWN = 8;
const SEARCH_DELAY_MS = 350;
const HASH = /^#pair-(\d+)$/;

const ui = {
  form: $("[data-filters]"),
  attribute: $("[name='attribute']"),
  value: $("[name='value']"),
  values: $("#xp-values"),
  summary: $("[data-summary]"),
  downloads: [...root.querySelectorAll("[data-download]")],
  error: $("[data-error]"),
  errorText: $("[data-error-text]"),
  retry: $("[data-retry]"),
  tableWrap: $("[data-table-wrap]"),
  rows: $("[data-rows]"),
  empty: $("[data-empty]"),
  emptyText: $("[data-empty-text]"),
  pager: $("[data-pager]"),
  prev: $("[data-prev]"),
  next: $("[data-next]"),
  page: $("[data-page]"),
  sortButtons: [...root.querySelectorAll("[data-sort]")],
  sortSelect: $("[data-ordering]"),
  clusters: { base: $("[data-clusters='base'] [data-cluster-list]"), exp: $("[data-clusters='exp'] [data-cluster-list]") },
  detail: $("[data-detail]"),
  detailTitle: $("[data-detail-title]"),
  detailBody: $("[data-detail-body]"),
  detailClose: $("[data-detail-close]"),
};

const state = {
  filters: {},
  ordering: DEFAULT_ORDERING,
  offset: 0,
  request: 0, // the latest list request: older answers are dropped
  detailRequest: 0,
  data: null, // the page of pairs on screen
  jaccardDistance: null, // overall, from the clusters endpoint: for "share of JD"
  returnFocus: null,
};

// ---------------------------------------------------------------- formatting

const counts = new Intl.NumberFormat("en");

function number(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  if (value === 0) return "0";
  if (Math.abs(value) < 1e-4) return value.toExponential(1);
  return String(Number(value.toPrecision(3)));
}

function percent(share) {
  if (share === null || share === undefined || !Number.isFinite(share)) return "—";
  const value = share * 100;
  const text = value < 1 && value > 0 ? value.toFixed(2) : value.toFixed(1);
  return `${text.replace(/\.0+$/, "")}%`;
}

function shareOfJd(contribution) {
  return state.jaccardDistance ? contribution / state.jaccardDistance : null;
}

const titleOf = (title, id) => (typeof title === "string" && title.trim() ? title : String(id));
const known = (names, value) => (Object.hasOwn(names, value) ? value : "other");

function badge(value, names) {
  return el("span", { className: `xp-badge xp-badge--${known(names, value)}`, text: names[value] || String(value) });
}

// ---------------------------------------------------------------- network

function problemOf(result, what) {
  if (result.status === 0) return `The ${what} could not be loaded: the server did not answer. Check the connection and try again.`;
  if (result.status === 401 || result.status === 403) return "You are signed out, or your account may no longer see this experiment. Sign in again.";
  if (result.status === 404) return `The ${what} could not be found: it is not part of this experiment, or no longer visible to you.`;
  if (result.status === 400 && result.data && typeof result.data === "object") {
    const parts = Object.entries(result.data).map(([field, messages]) => `${field}: ${[].concat(messages).join(" ")}`);
    return `Check the filters. ${parts.join("; ")}`;
  }
  const detail = result.data && typeof result.data.detail === "string" ? result.data.detail : `HTTP ${result.status}`;
  return `The ${what} could not be loaded (${detail}).`;
}

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
  tr.append(pair, kind, verdict, draws, contribution, agreement);
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

// ---------------------------------------------------------------- clusters

async function loadClusters(side) {
  const list = ui.clusters[side];
  const result = await requestJson("GET", `${config.urls.clusters}?side=${side}&limit=${CLUSTERS_SHOWN}`);
  if (result.status !== 200 || !result.data || !Array.isArray(result.data.clusters)) {
    list.replaceChildren(el("li", { className: "xp-clusters__note xp-clusters__note--error", text: problemOf(result, "clusters") }));
    return;
  }
  if (result.data.jaccard_distance !== null && state.jaccardDistance === null) {
    state.jaccardDistance = result.data.jaccard_distance;
    if (state.data) renderPairs(); // now with each pair's share of JD
  }
  const clusters = result.data.clusters.filter((cluster) => cluster.contribution > 0);
  if (!clusters.length) {
    list.replaceChildren(el("li", { className: "xp-clusters__note", text: `No ${SIDE_NAMES[side]} cluster changed.` }));
    return;
  }
  const largest = clusters[0].contribution;
  list.replaceChildren(...clusters.map((cluster) => clusterItem(side, cluster, largest)));
  markActiveCluster();
}

function clusterItem(side, cluster, largest) {
  const item = el("li");
  const button = el("button", {
    className: "xp-cluster",
    attrs: { type: "button", "data-side": side, "data-label": cluster.label, "aria-pressed": "false" },
  });
  const head = el("span", { className: "xp-cluster__head" });
  head.append(
    el("span", { className: "visually-hidden", text: `Show the pairs of ${SIDE_NAMES[side]} cluster ` }),
    el("code", { className: "xp-cluster__label", text: cluster.label }),
    el("span", { className: "xp-cluster__share", text: `${percent(shareOfJdOf(cluster))} of JD` }),
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
  button.addEventListener("click", () => chooseCluster(side, cluster.label));
  item.append(button);
  return item;
}

function shareOfJdOf(cluster) {
  return state.jaccardDistance ? cluster.contribution / state.jaccardDistance : null;
}

function chooseCluster(side, label) {
  const active = state.filters.cluster === label && state.filters.side === side;
  const filters = { ...state.filters };
  if (active) {
    delete filters.cluster;
    delete filters.side;
  } else {
    filters.cluster = label;
    filters.side = side;
  }
  state.filters = filters;
  writeForm();
  apply(filters);
}

function markActiveCluster() {
  for (const button of root.querySelectorAll(".xp-cluster")) {
    const active = state.filters.cluster === button.dataset.label && state.filters.side === button.dataset.side;
    button.setAttribute("aria-pressed", String(active));
  }
}

// ---------------------------------------------------------------- one pair

const pairUrl = (id) => config.urls.pair.replace(/\/0\/$/, `/${id}/`);

function openFromHash() {
  const match = HASH.exec(window.location.hash);
  if (match) {
    openDetail(Number(match[1]));
  } else if (ui.detail.open) {
    ui.detail.close();
  }
}

async function openDetail(id) {
  const request = ++state.detailRequest;
  if (!ui.detail.open) {
    state.returnFocus = document.activeElement;
    ui.detail.showModal();
  }
  ui.detail.dataset.state = "loading";
  ui.detail.dataset.pair = String(id);
  ui.detailTitle.textContent = `Pair ${id}`;
  ui.detailBody.setAttribute("aria-busy", "true");
  ui.detailBody.replaceChildren(el("p", { className: "xp-detail__loading muted", text: "Loading the pair…" }));
  const result = await requestJson("GET", pairUrl(id));
  if (request !== state.detailRequest) return;
  ui.detailBody.setAttribute("aria-busy", "false");
  if (result.status !== 200 || !result.data || !result.data.pair) {
    ui.detail.dataset.state = "error";
    const box = el("div", { className: "alert alert--error", attrs: { role: "alert" } });
    box.append(el("p", { text: problemOf(result, "pair") }));
    const again = el("button", { className: "button", text: "Try again", attrs: { type: "button" } });
    again.addEventListener("click", () => openDetail(id));
    box.append(again);
    ui.detailBody.replaceChildren(box);
    return;
  }
  renderDetail(result.data);
  ui.detail.dataset.state = "ready";
}

function renderDetail(data) {
  const { pair, items, verdicts } = data;
  ui.detailTitle.textContent = `${CLASS_NAMES[pair.pair_class] || "Sampled"} pair ${pair.id}`;
  const [vantage, partner] = items;
  const labels = { vantage: `Item i (vantage): ${titleOf(vantage.title, vantage.item_id)}`, partner: `Item j: ${titleOf(partner.title, partner.item_id)}` };
  const pairIds = { [vantage.item_id]: "item i", [partner.item_id]: "item j" };

  const columns = el("div", { className: "xp-items" });
  for (const item of items) {
    const other = item === vantage ? partner : vantage;
    const label = item.role === "vantage" ? "Item i · vantage" : "Item j · partner";
    const section = el("section", { className: "xp-item", attrs: { "aria-label": labels[item.role] } });
    section.append(el("p", { className: "item-card__label", text: label }));
    const card = el("div", { className: "item-card xp-item__card" });
    const content = el("div", { className: "item-card__content" });
    renderCard(content, item, other, label);
    card.append(content);
    section.append(card);
    for (const side of ["base", "exp"]) {
      const same = item === partner && vantage[`${side}_cluster`].label === item[`${side}_cluster`].label;
      section.append(clusterBlock(item[`${side}_cluster`], side, pairIds, same));
    }
    columns.append(section);
  }

  const body = [facts(pair), ...(config.gold && pair.task !== null ? [goldBlock(vantage, partner)] : []), legend(), columns, verdictsBlock(pair, verdicts)];
  ui.detailBody.replaceChildren(...body);
  ui.detail.scrollTop = 0;
}

function facts(pair) {
  const list = el("dl", { className: "xp-facts" });
  const add = (term, ...nodes) => {
    const box = el("div");
    box.append(el("dt", { text: term }));
    const dd = el("dd");
    dd.append(...nodes);
    box.append(dd);
    list.append(box);
  };
  add("Class", badge(pair.pair_class, CLASS_NAMES));
  if (pair.stratum !== "all") add("Stratum", pair.stratum);
  add("Draws", counts.format(pair.draws));
  const share = shareOfJd(pair.jaccard_contribution);
  add("Contribution to JD", number(pair.jaccard_contribution) + (share !== null && pair.jaccard_contribution > 0 ? ` (${percent(share)})` : ""));
  add("Verdict", badge(pair.verdict, VERDICT_NAMES));
  add("Agreement", percent(pair.agreement));
  if (pair.task !== null) add("Verdicts", `${pair.equivalent + pair.not_equivalent + pair.unsure} of ${pair.wanted} wanted`);
  return list;
}

function legend() {
  const note = el("p", { className: "xp-legend small muted" });
  const entry = (shared, text) => {
    const span = el("span", { className: "xp-legend__entry" });
    span.append(el("span", { className: `xp-mark${shared ? " xp-mark--shared" : ""}`, attrs: { "aria-hidden": "true" } }), el("span", { text }));
    return span;
  };
  note.append(
    entry(true, "Also in the item's cluster of the other clustering: both keep it with the item"),
    entry(false, "Only in this clustering's cluster"),
  );
  return note;
}

function clusterBlock(cluster, side, pairIds, sameAsVantage) {
  const block = el("section", { className: `xp-cluster-members xp-cluster-members--${side}` });
  const heading = el("h4", { className: "xp-cluster-members__title" });
  heading.append(`${SIDE_NAMES[side]} cluster `, el("code", { text: cluster.label }));
  block.append(heading);
  const size = cluster.items === null ? "Size not stored" : `${counts.format(cluster.items)} item${cluster.items === 1 ? "" : "s"} · weight ${number(cluster.weight)}`;
  block.append(el("p", { className: "xp-cluster-members__meta", text: size }));
  // Prepared on Dask: only the sampled members are known here (the population stays on the cluster).
  if (cluster.complete === false) block.append(el("p", { className: "muted small", text: "Members in the sample only: the population stays on the Dask cluster." }));
  if (sameAsVantage) {
    block.append(el("p", { className: "muted small", text: `The same ${SIDE_NAMES[side]} cluster as item i: its members are listed there.` }));
    return block;
  }
  const list = el("ul", { className: "xp-members", attrs: { "aria-label": `Members of ${SIDE_NAMES[side]} cluster ${cluster.label}` } });
  if (cluster.members.length > 10) list.tabIndex = 0; // a long list scrolls: reachable from the keyboard
  for (const member of cluster.members) {
    const li = el("li", { className: `xp-member${member.shared ? " xp-member--shared" : ""}` });
    li.append(el("span", { className: `xp-mark${member.shared ? " xp-mark--shared" : ""}`, attrs: { "aria-hidden": "true" } }));
    const text = el("span", { className: "xp-member__text" });
    if (member.title !== null && member.title !== undefined && String(member.title).trim()) {
      text.append(el("span", { className: "xp-member__title", text: String(member.title) }));
    } else {
      text.append(el("span", { className: "xp-member__title muted", text: member.title === null ? "(not in the sample: no card)" : "(no title)" }));
    }
    text.append(el("code", { className: "xp-member__id", text: member.item_id }));
    li.append(text);
    if (Object.hasOwn(pairIds, member.item_id)) li.append(el("span", { className: "xp-badge xp-badge--pair", text: pairIds[member.item_id] }));
    if (member.shared) li.append(el("span", { className: "visually-hidden", text: ` (also in the ${SIDE_NAMES[OTHER_SIDE[side]]} cluster)` }));
    list.append(li);
  }
  block.append(list);
  if (cluster.items > cluster.members.length) {
    block.append(el("p", { className: "xp-cluster-members__more", text: `Showing ${cluster.members.length} of ${counts.format(cluster.items)} members.` }));
  }
  return block;
}

// Admins make the pair a gold question, with its answer, in one click (POST .../gold-pairs/).
function goldBlock(vantage, partner) {
  const block = el("section", { className: "xp-gold", attrs: { "aria-label": "Gold question" } });
  block.append(el("span", { className: "xp-gold__label", text: "Make it a gold question:" }));
  const status = el("p", { className: "xp-gold__status small", attrs: { role: "status", "aria-live": "polite" } });
  const buttons = [];
  for (const [answer, label] of [["equivalent", "Equivalent"], ["not_equivalent", "Not equivalent"]]) {
    const button = el("button", { className: "button button--small", text: `Gold: ${label}`, attrs: { type: "button", "data-gold-answer": answer } });
    button.addEventListener("click", async () => {
      for (const b of buttons) b.disabled = true;
      status.classList.remove("xp-gold__status--error");
      status.textContent = "Saving…";
      const result = await requestJson("POST", config.gold.create, { item_a: vantage.item_id, item_b: partner.item_id, answer });
      if (result.status === 201 && result.data) {
        status.replaceChildren(`Gold question ${result.data.task} added: ${label.toLowerCase()}. `, el("a", { text: "Manage gold questions", attrs: { href: config.gold.page } }));
        return;
      }
      for (const b of buttons) b.disabled = false;
      status.classList.add("xp-gold__status--error");
      const data = result.data || {};
      const messages = typeof data.detail === "string" ? [data.detail] : Object.values(data).flat().map(String);
      status.textContent = `Not saved: ${messages.join(" ") || `the server answered ${result.status}.`}`;
    });
    buttons.push(button);
  }
  block.append(...buttons, status);
  return block;
}

function verdictsBlock(pair, verdicts) {
  const block = el("section", { className: "xp-verdicts", attrs: { "aria-labelledby": "xp-verdicts-title" } });
  block.append(el("h3", { text: "Verdicts", attrs: { id: "xp-verdicts-title" } }));
  if (pair.task === null) {
    block.append(el("p", { className: "muted", text: "A self pair is never shown to raters: it counts as equivalent." }));
    return block;
  }
  if (!verdicts.length) {
    block.append(el("p", { className: "muted", text: `No verdict yet (${pair.wanted} wanted).` }));
    return block;
  }
  const table = el("table", { className: "table xp-verdicts__table" });
  table.append(el("caption", { className: "visually-hidden", text: "Verdicts on this pair, oldest first" }));
  const head = el("tr");
  for (const name of ["Verdict", "Rater", "Comment", "When"]) head.append(el("th", { text: name, attrs: { scope: "col" } }));
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  for (const verdict of verdicts) {
    const tr = el("tr");
    const cell = el("td");
    cell.append(badge(verdict.verdict, VERDICT_NAMES));
    const when = new Date(verdict.created_at);
    const time = el("time", { text: Number.isNaN(when.getTime()) ? String(verdict.created_at) : when.toLocaleString(), attrs: { datetime: String(verdict.created_at) } });
    const whenCell = el("td");
    whenCell.append(time);
    tr.append(cell, el("td", { text: String(verdict.rater) }), el("td", { className: "xp-comment", text: verdict.comment ? String(verdict.comment) : "—" }), whenCell);
    tbody.append(tr);
  }
  table.append(thead, tbody);
  const wrap = el("div", { className: "table-scroll" });
  wrap.append(table);
  block.append(wrap);
  return block;
}

function onDetailClosed() {
  state.detailRequest += 1;
  const id = ui.detail.dataset.pair;
  delete ui.detail.dataset.pair;
  if (HASH.test(window.location.hash)) {
    window.history.replaceState(window.history.state, "", `${window.location.pathname}${window.location.search}`);
  }
  const row = id ? ui.rows.querySelector(`a[href="#pair-${id}"]`) : null;
  const target = row || state.returnFocus;
  if (target && document.contains(target)) target.focus();
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
  loadClusters("base");
  loadClusters("exp");
  openFromHash();
}

start();
