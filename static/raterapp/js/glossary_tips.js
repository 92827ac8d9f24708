// Glossary terms as accessible tooltips. A term is any element with data-term-help (its one-line
// definition) and data-term (a key unique on the page, so that a term re-rendered by a live
// table is known again). Each term is made focusable and given a role="tooltip" child that
// describes it (aria-describedby); the tooltip shows on hover, on keyboard focus and on tap,
// and Escape hides it. One controller, with listeners on the document, serves every term: when
// a live table replaces its rows, the term that was open (or focused) is opened (or focused)
// again in the new rows.

const OPEN = "term--open";
let nextId = 0;
let open = null; // { key, focused, pinned }

/** A term element: `label` with its definition `help`; `key` names it on the page. */
export function glossaryTerm(label, help, key, tag = "span") {
  const node = document.createElement(tag);
  node.textContent = label;
  if (help) {
    node.dataset.term = key;
    node.dataset.termHelp = help;
    upgrade(node);
  }
  return node;
}

function upgrade(node) {
  if (node.querySelector(":scope > .term__tip")) return;
  nextId += 1;
  const tip = document.createElement("span");
  tip.className = "term__tip";
  tip.id = `term-tip-${nextId}`;
  tip.setAttribute("role", "tooltip");
  tip.textContent = node.dataset.termHelp;
  tip.hidden = true;
  node.classList.add("term");
  if (!node.hasAttribute("tabindex")) node.tabIndex = 0;
  node.setAttribute("aria-describedby", tip.id);
  node.removeAttribute("title"); // a native tooltip would double this one
  node.append(tip);
}

function termOf(target) {
  return target instanceof Element ? target.closest("[data-term-help]") : null;
}

function current() {
  return open ? document.querySelector(`[data-term="${CSS.escape(open.key)}"]`) : null;
}

function show(node, how) {
  const before = current();
  if (before && before !== node) hide(before);
  const tip = node.querySelector(":scope > .term__tip");
  if (!tip) return;
  open = { key: node.dataset.term, focused: how.focused ?? open?.focused ?? false, pinned: how.pinned ?? false };
  tip.hidden = false;
  node.classList.add(OPEN);
  place(node, tip);
}

function hide(node) {
  const tip = node && node.querySelector(":scope > .term__tip");
  if (tip) tip.hidden = true;
  if (node) node.classList.remove(OPEN);
}

function close() {
  hide(current());
  open = null;
}

// Fixed to the viewport (a table's scroll box would clip it): below the term, or above it when
// there is no room below, and inside the viewport's width.
function place(node, tip) {
  if (!tip || tip.hidden) return;
  const box = node.getBoundingClientRect();
  const room = document.documentElement.clientWidth - 8;
  const left = Math.max(8, Math.min(box.left, room - tip.offsetWidth));
  const below = box.bottom + 2;
  const above = box.top - tip.offsetHeight - 2;
  const top = below + tip.offsetHeight > window.innerHeight && above > 0 ? above : below;
  tip.style.left = `${left}px`;
  tip.style.top = `${top}px`;
}

function install() {
  if (document.documentElement.dataset.glossaryTips) return;
  document.documentElement.dataset.glossaryTips = "on";
  document.querySelectorAll("[data-term-help]").forEach(upgrade);

  document.addEventListener("mouseover", (event) => {
    const node = termOf(event.target);
    if (node && !(open && open.key === node.dataset.term)) show(node, {});
  });
  document.addEventListener("mouseout", (event) => {
    const node = termOf(event.target);
    if (!node || node.contains(event.relatedTarget)) return;
    if (open && open.key === node.dataset.term && !open.focused && !open.pinned) close();
  });
  document.addEventListener("focusin", (event) => {
    const node = termOf(event.target);
    if (node) show(node, { focused: true, pinned: open?.key === node.dataset.term && open.pinned });
  });
  document.addEventListener("focusout", (event) => {
    const node = termOf(event.target);
    if (!node) return;
    // Decided a task later: when a live table replaced the row, the observer has moved the focus
    // to the new row's term by then, and the old one is gone.
    window.setTimeout(() => {
      if (!node.isConnected || !open || open.key !== node.dataset.term || node.contains(document.activeElement)) return;
      if (open.pinned) open.focused = false;
      else close();
    }, 0);
  });
  // A tap (or a click) pins the definition open; a tap elsewhere closes it.
  document.addEventListener("click", (event) => {
    const node = termOf(event.target);
    if (node) show(node, { pinned: true });
    else if (open && open.pinned) close();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && open) close();
  });
  const follow = () => {
    const node = current();
    if (node) place(node, node.querySelector(":scope > .term__tip"));
  };
  window.addEventListener("resize", follow);
  window.addEventListener("scroll", follow, { capture: true, passive: true });

  new MutationObserver((records) => {
    for (const record of records) {
      for (const added of record.addedNodes) {
        if (!(added instanceof Element)) continue;
        if (added.matches("[data-term-help]")) upgrade(added);
        added.querySelectorAll("[data-term-help]").forEach(upgrade);
      }
    }
    if (!open) return;
    const node = current();
    if (!node) return;
    const lost = !document.activeElement || document.activeElement === document.body;
    if (open.focused && lost) node.focus({ preventScroll: true });
    if (!node.classList.contains(OPEN)) show(node, { focused: open.focused, pinned: open.pinned });
  }).observe(document.body, { childList: true, subtree: true });
}

install();
