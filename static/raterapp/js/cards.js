// Item cards, shared by the judging page and the pair explorer.
//
// Everything in a card is untrusted (it comes from an uploaded catalogue): it is written with
// textContent only, never as HTML, and only absolute http(s) addresses become links or images.

/** The address if it is an absolute http(s) URL, else null (javascript:, data:, relative…). */
export function safeUrl(value) {
  if (typeof value !== "string" || !value.trim()) return null;
  let url;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
}

/** A new element; `text` is set as textContent, `attrs` as attributes. */
export function el(tag, { className, text, attrs } = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  return node;
}

/** An attribute value as people read it: "—" when missing. */
export function shownValue(value) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function placeholder(text) {
  const box = el("div", { className: "item-card__media item-card__media--empty" });
  box.append(el("span", { text }));
  return box;
}

function media(card, label) {
  const src = safeUrl(card.image_url);
  if (!src) return placeholder(card.image_url ? "Picture not shown: not a web address" : "No picture");
  const box = el("div", { className: "item-card__media" });
  const img = el("img", { attrs: { alt: `Picture of ${label}`, referrerpolicy: "no-referrer", decoding: "async" } });
  img.addEventListener("error", () => box.replaceWith(placeholder("The picture could not be loaded")), { once: true });
  img.src = src;
  box.append(img);
  return box;
}

function attributesTable(attributes, other, label) {
  const entries = attributes && typeof attributes === "object" && !Array.isArray(attributes) ? Object.entries(attributes) : [];
  if (!entries.length) return null;
  const otherAttributes = other && typeof other === "object" && !Array.isArray(other) ? other : {};
  const table = el("table", { className: "item-card__attributes" });
  table.append(el("caption", { className: "visually-hidden", text: `Attributes of ${label}` }));
  const body = el("tbody");
  for (const [name, value] of entries) {
    const row = el("tr");
    const differs = Object.hasOwn(otherAttributes, name) && shownValue(otherAttributes[name]) !== shownValue(value);
    if (differs) row.className = "differs";
    row.append(el("th", { text: name, attrs: { scope: "row" } }));
    const cell = el("td", { text: shownValue(value) });
    if (differs) cell.append(el("span", { className: "visually-hidden", text: " (differs from the other item)" }));
    row.append(cell);
    body.append(row);
  }
  table.append(body);
  return table;
}

/** A link to the item's page (only an http(s) address), or a note saying why there is none. */
export function itemLink(card, label) {
  const href = safeUrl(card.url);
  if (href) {
    const a = el("a", { className: "item-card__link", text: "Open the item's page", attrs: { href, target: "_blank", rel: "noopener noreferrer" } });
    a.append(el("span", { className: "visually-hidden", text: ` (${label}, opens in a new tab)` }));
    a.append(el("span", { text: " ↗", attrs: { "aria-hidden": "true" } }));
    return a;
  }
  if (!card.url) return el("p", { className: "item-card__link muted", text: "No page to open" });
  const inert = el("p", { className: "item-card__link item-card__link--inert", text: "Link not shown (not a web address): " });
  inert.append(el("code", { text: String(card.url) }));
  return inert;
}

/**
 * Fill `container` with an item's card: picture, title, description and attributes (those that
 * differ from `other`'s are marked), and a link to the item's page.
 */
export function renderCard(container, card, other, label) {
  card = card || {};
  const title = typeof card.title === "string" && card.title.trim() ? card.title : "";
  const heading = el("h3", { className: "item-card__title", text: title || "(no title)" });
  if (!title) heading.classList.add("muted");
  const details = el("div", { className: "item-card__details", attrs: { tabindex: "0", role: "group", "aria-label": `Details of ${label}` } });
  if (card.description) details.append(el("p", { className: "item-card__description", text: String(card.description) }));
  const table = attributesTable(card.attributes, (other || {}).attributes, label);
  if (table) details.append(table);
  if (!details.childElementCount) details.append(el("p", { className: "muted", text: "No description" }));
  container.replaceChildren(media(card, label), heading, details, itemLink(card, label));
}
