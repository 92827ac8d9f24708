// The pair explorer's page: its configuration, its elements and what it shows now, shared by
// pair_explorer.js (filters, list, order), explorer_clusters.js and explorer_detail.js.

export const config = JSON.parse(document.getElementById("explorer-config").textContent);
export const root = document.getElementById("explorer");
const $ = (selector) => root.querySelector(selector);

export const FILTERS = ["pair_class", "verdict", "attribute", "value", "cluster", "side", "q", "include_self"];
export const ORDERINGS = ["-jaccard_contribution", "jaccard_contribution", "-draws", "draws", "-score", "score", "pair_class"];
export const DEFAULT_ORDERING = "-jaccard_contribution";
export const CLUSTERS_SHOWN = 8;
export const SEARCH_DELAY_MS = 350;
export const HASH = /^#pair-(\d+)$/;

export const ui = {
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

export const state = {
  filters: {},
  ordering: DEFAULT_ORDERING,
  offset: 0,
  request: 0, // the latest list request: older answers are dropped
  detailRequest: 0,
  data: null, // the page of pairs on screen
  jaccardDistance: null, // overall, from the clusters endpoint: for "share of JD"
  returnFocus: null,
};

/** A pair's (or a cluster's) contribution as a share of the overall JaccardDistance. */
export function shareOfJd(contribution) {
  return state.jaccardDistance ? contribution / state.jaccardDistance : null;
}
