// The dashboard's slices: the estimates per value of a catalogue attribute, in a table sorted
// by any column (GET .../slices/?attribute=...).

import { el } from "./cards.js";
import { requestJson } from "./http.js";
import { count, fmt, interval, percent } from "./numbers.js";

function sliceColumns(scheme) {
  const bad = scheme === "precision" ? ["BadSplitRate", "BadMergeRate"] : ["BadSplitDistance", "BadMergeDistance"];
  return [
    { key: "label", title: "Value", get: (r) => r.label, text: (r) => r.label || "(empty)" },
    { key: "items", title: "Items", num: true, get: (r) => r.items, text: (r) => count(r.items) },
    { key: "weight_fraction", title: "Weight", num: true, get: (r) => r.weight_fraction, text: (r) => percent(r.weight_fraction) },
    { key: "jd", title: "JaccardDistance", num: true, get: (r) => r.impact.JaccardDistance, text: (r) => fmt(r.impact.JaccardDistance) },
    ...["DeltaPrecision", ...bad].map((name) => ({
      key: name,
      title: name,
      num: true,
      get: (r) => (r.metric && r.metric[name] ? r.metric[name].value : null),
      text: (r) => (r.metric && r.metric[name] ? `${fmt(r.metric[name].value)} ${interval(r.metric[name])}` : "—"),
      reading: (r) => (r.metric && r.metric[name] ? r.metric[name].reading : "no_data"),
    })),
    {
      key: "contribution",
      title: "ΔPrecision contribution",
      num: true,
      get: (r) => (r.contribution ? r.contribution.DeltaPrecision.value : null),
      text: (r) => (r.contribution ? `${fmt(r.contribution.DeltaPrecision.value)} ${interval(r.contribution.DeltaPrecision)}` : "—"),
    },
  ];
}

/** The slices card of `root`: {loadAttributes, reload} (reload: again, after a new snapshot or derived step). */
export function slicesTable(root) {
  let sliceTable = null;

  function renderSlices() {
    if (!sliceTable) return;
    const { body, columns, sortKey, descending } = sliceTable;
    const head = el("tr");
    for (const column of columns) {
      const th = el("th", { attrs: { scope: "col" }, className: column.num ? "num" : "" });
      if (column.key === sortKey) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      const button = el("button", { text: column.title, className: "sort-button", attrs: { type: "button" } });
      button.addEventListener("click", () => {
        sliceTable.descending = sliceTable.sortKey === column.key ? !sliceTable.descending : column.num;
        sliceTable.sortKey = column.key;
        renderSlices();
      });
      th.append(button);
      head.append(th);
    }
    root.querySelector("[data-slices-head]").replaceChildren(head);
    const column = columns.find((c) => c.key === sortKey);
    const rows = [...body.rows].sort((a, b) => {
      const x = column.get(a);
      const y = column.get(b);
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      const order = typeof x === "string" ? x.localeCompare(y) : x - y;
      return descending ? -order : order;
    });
    root.querySelector("[data-slices-rows]").replaceChildren(
      ...rows.map((row) => {
        const tr = el("tr", { attrs: { "data-slice": row.label } });
        columns.forEach((c, k) => {
          const cell = el(k === 0 ? "th" : "td", { className: c.num ? "num" : "", attrs: k === 0 ? { scope: "row" } : {} });
          const text = el("span", { text: c.text(row) });
          if (c.reading) text.className = `reading reading--${c.reading(row)}`;
          cell.append(text);
          tr.append(cell);
        });
        return tr;
      }),
    );
  }

  async function loadSlices(attribute) {
    const status = root.querySelector("[data-slices-status]");
    root.querySelector("[data-slices-empty]").hidden = Boolean(attribute);
    root.querySelector("[data-slices-block]").hidden = !attribute;
    root.querySelector("[data-slices-downloads]").hidden = !attribute;
    if (!attribute) {
      sliceTable = null;
      return;
    }
    const url = `${root.dataset.slicesUrl}?attribute=${encodeURIComponent(attribute)}`;
    root.querySelector("[data-slices-csv]").href = `${url}&format=csv`;
    root.querySelector("[data-slices-json]").href = url;
    status.textContent = "Computing the slices' estimates…";
    try {
      const { status: code, data: body } = await requestJson("GET", url);
      if (code !== 200 || !body) throw new Error(`HTTP ${code}`);
      const previous = sliceTable && sliceTable.attribute === attribute ? sliceTable : null;
      sliceTable = {
        attribute,
        body,
        columns: sliceColumns(body.scheme),
        sortKey: previous ? previous.sortKey : "weight_fraction",
        descending: previous ? previous.descending : true,
      };
      renderSlices();
      const from = body.computed_from ? `, from ${body.computed_from.judgements} verdicts` : "";
      status.textContent = body.note
        ? `${body.values} values. ${body.note}`
        : body.values > body.estimated_values
          ? `${body.values} values; quality estimates for the ${body.estimated_values} heaviest${from}.`
          : `${body.values} values${from && `; quality estimates${from}`}.`;
    } catch (error) {
      status.textContent = `Could not load the slices (${error.message}).`;
    }
  }

  async function loadSliceAttributes() {
    const select = root.querySelector("[data-slice-attribute]");
    try {
      const { status: code, data } = await requestJson("GET", root.dataset.slicesUrl);
      if (code !== 200 || !data) throw new Error(`HTTP ${code}`);
      const { attributes } = data;
      for (const name of attributes) select.append(el("option", { text: name, attrs: { value: name } }));
      if (!attributes.length) root.querySelector("[data-slices-empty]").textContent = "The catalogue has no attribute to slice by.";
    } catch (error) {
      root.querySelector("[data-slices-empty]").textContent = "Could not load the attributes.";
    }
    select.addEventListener("change", () => loadSlices(select.value));
  }

  return {
    loadAttributes: loadSliceAttributes,
    reload() {
      if (sliceTable) loadSlices(sliceTable.attribute);
    },
  };
}
