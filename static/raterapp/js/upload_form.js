// The upload form, sent in the background: a refused upload shows every error at the top (focused)
// and beside its field, and the files chosen stay chosen (a full page reload would empty every
// file input, so the user would have to find each file again). Without JavaScript the form posts
// as usual and the page says the files have to be chosen again.

import { focusSummary } from "./error_summary.js";
import { submitForm } from "./http.js";

const form = document.querySelector("[data-upload-form]");

function fieldsOf(root) {
  return [...root.querySelectorAll(".field")];
}

/** The server's answer (the page again, status 400) applied to this page, keeping the inputs. */
function showErrors(page) {
  const fresh = page.querySelector("[data-upload-form]");
  if (!fresh) return false;
  const old = fieldsOf(form);
  const renewed = fieldsOf(fresh);
  if (old.length !== renewed.length) return false;
  old.forEach((field, k) => {
    field.classList.toggle("field--invalid", renewed[k].classList.contains("field--invalid"));
    field.querySelector(":scope > .errors")?.remove();
    const errors = renewed[k].querySelector(":scope > .errors");
    const input = field.querySelector("input, select, textarea");
    const anchor = [...field.children].find((child) => child.tagName !== "LABEL" && !child.classList.contains("help"));
    if (errors) field.insertBefore(document.importNode(errors, true), anchor || null);
    if (input) input.toggleAttribute("aria-invalid", Boolean(errors));
  });
  const files = fresh.querySelector("#files_errors");
  form.querySelector("#files_errors")?.remove();
  if (files) form.querySelector(".file-choice").before(document.importNode(files, true));
  const summary = fresh.querySelector("[data-error-summary]");
  form.querySelector("[data-error-summary]")?.remove();
  if (summary) {
    const copy = document.importNode(summary, true);
    const note = copy.querySelector("[data-files-note]");
    if (note) note.textContent = "The files you chose are still chosen: fix what is listed and upload again.";
    form.querySelector("fieldset").before(copy);
    focusSummary(copy);
  }
  return true;
}

function showFailure(text) {
  form.querySelector("[data-error-summary]")?.remove();
  const box = document.createElement("div");
  box.className = "alert alert--error error-summary";
  box.setAttribute("role", "alert");
  box.tabIndex = -1;
  box.dataset.errorSummary = "";
  const heading = document.createElement("h2");
  heading.textContent = "The experiment was not created";
  const body = document.createElement("p");
  body.textContent = text;
  box.append(heading, body);
  form.querySelector("fieldset").before(box);
  focusSummary(box);
}

if (form && window.fetch && window.FormData && window.DOMParser) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const submit = form.querySelector("button[type='submit']");
    if (submit.disabled) return;
    const label = submit.textContent;
    submit.disabled = true;
    submit.textContent = "Uploading…";
    const response = await submitForm(form);
    if (response.status === 0) {
      showFailure("The server could not be reached. Check your connection and upload again: your files are still chosen.");
      submit.disabled = false;
      submit.textContent = label;
      return;
    }
    if (response.status >= 200 && response.status < 300 && response.redirected) {
      window.location.assign(response.url);
      return;
    }
    submit.disabled = false;
    submit.textContent = label;
    const page = new DOMParser().parseFromString(response.text, "text/html");
    if (response.status !== 400 || !showErrors(page)) {
      showFailure(`The server answered ${response.status}. Your files are still chosen: try again.`);
    }
  });
}
