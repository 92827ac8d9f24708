// The pair on the judging page: two cards whose fields line up row by row (picture, title,
// description, each attribute, link), so the eye compares across, also on a phone. A row that
// is empty on both sides is left out; where only one side is empty it says so. Where the two
// texts differ, the differing characters are marked (diff.js); pictures open larger in a dialog.
//
// Item data is untrusted: text goes in with textContent only (cards.js `el`), never as HTML,
// and only absolute http(s) addresses become links or images.

import { el, itemLink, safeUrl, shownValue } from "./cards.js";
import { differingParts } from "./diff.js";

const DIFFERS_NOTE = " (differs from the other item)";

const present = (value) => value !== null && value !== undefined && String(value).trim() !== "";

function attributesOf(card) {
  const attributes = card && card.attributes;
  return attributes && typeof attributes === "object" && !Array.isArray(attributes) ? attributes : {};
}

/** `text` in a new `tag`, its characters that `other` lacks in <mark>s; also whether any differ. */
function markedText(tag, { className, text, other, attrs }) {
  const node = el(tag, { className, attrs });
  let differs = false;
  for (const part of differingParts(text, present(other) ? String(other) : "")) {
    if (!part.text) continue;
    if (part.differs) {
      node.append(el("mark", { className: "diff", text: part.text }));
      differs = true;
    } else {
      node.append(document.createTextNode(part.text));
    }
  }
  if (differs) node.append(el("span", { className: "visually-hidden", text: DIFFERS_NOTE }));
  return { node, differs };
}

function missing(className, text) {
  return el("p", { className: `${className} item-card__missing`, text });
}

function picture(card, label, onOpen) {
  const src = safeUrl(card.image_url);
  if (!src) return missing("item-card__media", present(card.image_url) ? "Picture not shown: not a web address" : "No picture");
  const button = el("button", {
    className: "item-card__media",
    attrs: { type: "button", "aria-haspopup": "dialog", "aria-label": `Enlarge the picture of ${label} (P)` },
  });
  const img = el("img", { attrs: { alt: `Picture of ${label}`, referrerpolicy: "no-referrer", decoding: "async" } });
  img.addEventListener("error", () => button.replaceWith(missing("item-card__media", "The picture could not be loaded")), { once: true });
  img.src = src;
  button.append(img);
  button.addEventListener("click", () => onOpen(button));
  return button;
}

function title(card, other) {
  const text = present(card.title) ? String(card.title) : "";
  if (!text) return el("h3", { className: "item-card__title muted", text: "(no title)" });
  return markedText("h3", { className: "item-card__title", text, other: other.title }).node;
}

function description(card, other, label) {
  if (!present(card.description)) return missing("item-card__description", "No description");
  const text = String(card.description);
  // A long description scrolls in its row; the keyboard reaches it too.
  const attrs = text.length > 240 ? { tabindex: "0", role: "group", "aria-label": `Description of ${label}` } : undefined;
  return markedText("p", { className: "item-card__description", text, other: other.description, attrs }).node;
}

function attributeRow(name, value, otherValue) {
  const row = el("div", { className: "item-field" });
  row.append(el("dt", { className: "item-field__name", text: name }));
  if (!present(value)) {
    row.append(el("dd", { className: "item-field__value muted", text: "—" }));
    return row;
  }
  const { node, differs } = markedText("dd", { className: "item-field__value", text: shownValue(value), other: present(otherValue) ? shownValue(otherValue) : "" });
  if (differs) row.classList.add("differs");
  row.append(node);
  return row;
}

/** The rows both cards show, in order: each a function of (card, other, label) giving its node. */
function rowsOf(left, right, onOpen) {
  const rows = [];
  const either = (field) => present(left[field]) || present(right[field]);
  if (either("image_url")) rows.push((card, other, label) => picture(card, label, onOpen));
  if (either("title")) rows.push((card, other) => title(card, other));
  if (either("description")) rows.push((card, other, label) => description(card, other, label));
  const names = [...new Set([...Object.keys(attributesOf(left)), ...Object.keys(attributesOf(right))])];
  const shown = names.filter((name) => present(attributesOf(left)[name]) || present(attributesOf(right)[name]));
  if (shown.length) {
    rows.push((card, other, label) => {
      const list = el("dl", { className: "item-card__fields", attrs: { "aria-label": `Attributes of ${label}` } });
      for (const name of shown) list.append(attributeRow(name, attributesOf(card)[name], attributesOf(other)[name]));
      return list;
    });
  }
  if (either("url")) rows.push((card, other, label) => (present(card.url) ? itemLink(card, label) : missing("item-card__link", "No page to open")));
  return { rows, fieldRows: shown.length };
}

/**
 * Render the pair into the two cards' containers ({left, right}); `labels` names the sides,
 * `onOpenPicture(button)` opens the pictures dialog. Sets --rows on `pairNode` for the grid.
 */
export function renderPair(pairNode, containers, pair, labels, onOpenPicture) {
  const left = pair.left || {};
  const right = pair.right || {};
  const { rows, fieldRows } = rowsOf(left, right, onOpenPicture);
  if (!rows.length) rows.push((card, other) => title(card, other));
  containers.left.replaceChildren(...rows.map((row) => row(left, right, labels.left)));
  containers.right.replaceChildren(...rows.map((row) => row(right, left, labels.right)));
  // The label, then each row; the attribute list counts one row per attribute.
  const count = 1 + rows.length + Math.max(fieldRows - 1, 0);
  pairNode.style.setProperty("--rows", String(count));
}

const preloaded = new Set();
/** Fetch the pair's pictures ahead (the preloaded pair), so it shows at once. */
export function preloadImages(pair) {
  for (const card of [pair.left, pair.right]) {
    const src = safeUrl(card && card.image_url);
    if (!src) continue;
    const img = new Image();
    img.referrerPolicy = "no-referrer";
    preloaded.add(img); // held until loaded, or the browser may drop the request
    const forget = () => preloaded.delete(img);
    img.addEventListener("load", forget, { once: true });
    img.addEventListener("error", forget, { once: true });
    img.src = src;
  }
}

// ---------------------------------------------------------------- the pictures dialog

/** The dialog that shows both pictures large; P or a click on a picture opens it, Esc closes it. */
export function picturesDialog(dialog, labels) {
  let opener = null;
  let current = null;
  const bodies = { left: dialog.querySelector("[data-picture='left'] [data-picture-body]"), right: dialog.querySelector("[data-picture='right'] [data-picture-body]") };
  dialog.querySelector("[data-pictures-close]").addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close(); // a click on the backdrop
  });
  dialog.addEventListener("close", () => {
    if (opener && opener.isConnected) opener.focus();
    opener = null;
  });
  return {
    setPair(pair) {
      current = pair;
    },
    hasPictures() {
      return Boolean(current && (safeUrl((current.left || {}).image_url) || safeUrl((current.right || {}).image_url)));
    },
    isOpen() {
      return dialog.open;
    },
    open(from) {
      if (!this.hasPictures() || dialog.open) return;
      opener = from || document.activeElement;
      for (const side of ["left", "right"]) {
        const src = safeUrl((current[side] || {}).image_url);
        const img = src ? el("img", { attrs: { alt: `Picture of ${labels[side]}`, referrerpolicy: "no-referrer", src } }) : el("p", { className: "muted", text: "No picture" });
        bodies[side].replaceChildren(img);
      }
      dialog.showModal();
      dialog.querySelector("[data-pictures-close]").focus();
    },
    close() {
      if (dialog.open) dialog.close();
    },
  };
}
