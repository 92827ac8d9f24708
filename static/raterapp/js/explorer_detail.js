// The pair explorer's one pair, in a dialog: both items with their Base and Exp clusters, the
// facts of the pair, its verdicts and, for admins, the buttons that make it a gold question.
// The open pair lives in the hash, #pair-<id>. Item data is untrusted (cards.js).

import { el, renderCard } from "./cards.js";
import { errorText } from "./errors.js";
import { requestJson } from "./http.js";
import { CLASS_NAMES, OTHER_SIDE, SCORE_SOURCES, SIDE_NAMES, VERDICT_NAMES, badge, counts, number, percent, problemOf, scoreText, titleOf } from "./explorer_format.js";
import { HASH, config, shareOfJd, state, ui } from "./explorer_state.js";

const pairUrl = (id) => config.urls.pair.replace(/\/0\/$/, `/${id}/`);

export function openFromHash() {
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
  if (pair.score !== null) add("Score", `${scoreText(pair)} (${SCORE_SOURCES[pair.score_source] || "unknown source"})`);
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
  for (const answer of ["equivalent", "not_equivalent"]) {
    const label = config.verdictLabels[answer];
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
      status.textContent = `Not saved: ${errorText(result, (code) => `the server answered ${code}.`)}`;
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
    const rater = verdict.source_experiment ? `${verdict.rater} (reused from experiment ${verdict.source_experiment})` : String(verdict.rater);
    tr.append(cell, el("td", { text: rater }), el("td", { className: "xp-comment", text: verdict.comment ? String(verdict.comment) : "—" }), whenCell);
    tbody.append(tr);
  }
  table.append(thead, tbody);
  const wrap = el("div", { className: "table-scroll" });
  wrap.append(table);
  block.append(wrap);
  return block;
}

export function onDetailClosed() {
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
