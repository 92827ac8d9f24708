// The owner's Recall_Base range for ΔRecall and IQ (abcde-spec §14): the form in the derived
// card saves it through the API; the worker then recomputes them and the page refreshes.

import { errorText, failedText } from "./errors.js";
import { requestJson } from "./http.js";

export function bindRecallBaseForm(onSaved) {
  const form = document.querySelector("[data-recall-base-form]");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = form.querySelector("[data-recall-base-status]");
    const body = {
      recall_base_low: Number(form.elements.recall_base_low.value) / 100,
      recall_base_high: Number(form.elements.recall_base_high.value) / 100,
    };
    const { status: code, data } = await requestJson("PUT", form.dataset.recallBaseUrl, body);
    if (code === 200) {
      status.textContent = "Range saved: ΔRecall and IQ are being recomputed.";
      onSaved();
    } else {
      status.textContent = errorText({ status: code, data }, failedText);
    }
  });
}
