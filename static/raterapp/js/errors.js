// The one reading of the API's refusals. DRF answers {detail: message} or
// {field: [messages], non_field_errors: [...]}; anything else (an HTML page from a proxy, no
// answer at all) has only its status.

const text = (value) => (typeof value === "string" ? value : JSON.stringify(value));

/** Every message of a refusal, without field names; [] when the body has none. */
export function messagesOf(result) {
  const data = result.data;
  if (!data || typeof data !== "object") return [];
  if (typeof data.detail === "string") return data.detail ? [data.detail] : [];
  return Object.values(data).flat().filter((value) => value !== null && value !== undefined).map(text);
}

/**
 * The messages grouped by the form's `fields`; the others go under "" with their field's name
 * in front (non_field_errors without).
 */
export function messagesByField(result, fields = []) {
  const data = result.data;
  if (!data || typeof data !== "object") return {};
  if (typeof data.detail === "string") return { "": [data.detail] };
  const out = {};
  for (const [name, value] of Object.entries(data)) {
    const key = fields.includes(name) ? name : "";
    const texts = (Array.isArray(value) ? value : [value]).map(text);
    out[key] = [...(out[key] || []), ...(key || name === "non_field_errors" ? texts : texts.map((t) => `${name}: ${t}`))];
  }
  return out;
}

/** The messages as one text, else `fallback(status)`; no answer at all (status 0) says so. */
export function errorText(result, fallback = (status) => `HTTP ${status}`) {
  const messages = messagesOf(result);
  if (messages.length) return messages.join(" ");
  return result.status === 0 ? "the server could not be reached; check the connection and try again." : fallback(result.status);
}

/** The usual fallback: no answer, or a refusal that says nothing. */
export const failedText = (status) => (status === 0 ? "The server could not be reached; try again." : `The request failed (HTTP ${status}).`);
