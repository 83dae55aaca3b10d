// The backoff calculator's shared parts: its fields, its state and the small
// helpers of its form (errors beside their fields, copying, wording).
import * as B from "./backoff.js";
import { $, h, toast, fieldText, labelOf } from "./ui.js";
import { duration } from "./chart.js";

export const SEEDS = 2000;
export const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
export const INTEGER = /^[+-]?\d+$/;

// Calculator inputs: element id, URL parameter, Go field name.
export const CALC = [
  { id: "base", field: "baseMs" },
  { id: "multiplier", field: "multiplier" },
  { id: "cap", field: "capMs" },
  { id: "attempts", field: "attempts" },
  { id: "jitter", field: "jitter" },
  { id: "first", field: "firstWait" },
  { id: "seed", field: "seed" },
];
// Policy inputs: element id (also the URL parameter), Go field name.
export const POLICY = [
  { id: "maxAttempts", field: "maxAttempts" },
  { id: "initialDelayMs", field: "initialDelayMs" },
  { id: "policyMultiplier", field: "multiplier" },
  { id: "maxDelayMs", field: "maxDelayMs" },
  { id: "jitterPercent", field: "jitterPercent" },
];

export const state = {
  mode: "calc",
  // Values from the URL that a <select> or radio cannot hold, kept so the
  // page can say what is wrong with the link instead of silently changing it.
  raw: { jitter: null, first: null, preset: null },
  calc: null, // the last valid calculator result
  policy: null, // {params, schedule, hint}
  histRetry: null,
};

// ---------- small DOM helpers ----------

export async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    toast(`Copied ${what}.`);
  } catch {
    const ta = h("textarea", { readonly: "", class: "offscreen", "aria-hidden": "true" });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    toast(ok ? `Copied ${what}.` : `The browser did not allow copying ${what}.`);
  }
}

export function radioValue(name) {
  const r = document.querySelector(`input[name="${name}"]:checked`);
  return r ? r.value : "";
}

export function setRadio(name, value) {
  for (const r of document.querySelectorAll(`input[name="${name}"]`)) r.checked = r.value === value;
}

// showErrors puts each message beside its field (in the page's words, see
// fieldText) and lists the fields to fix above the results, each a link to
// its field, so no message is printed twice.
export function showErrors(box, ids, errors, fieldToId) {
  const byId = new Map();
  for (const e of errors) {
    const id = fieldToId(e.field);
    if (!byId.has(id)) byId.set(id, []);
    byId.get(id).push(fieldText(e.field, e.message));
  }
  for (const id of ids) {
    const msgEl = $(id + "-error");
    const input = $(id) || document.querySelector(`input[name="${id}"]`);
    const msgs = byId.get(id);
    if (msgEl) {
      msgEl.hidden = !msgs;
      msgEl.textContent = msgs ? msgs.join(" ") : "";
    }
    if (input) {
      if (msgs) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }
  const list = box.querySelector("ul");
  list.replaceChildren(...[...byId.keys()].map((id) => {
    const hasField = !!$(id + "-error");
    if (!hasField) return h("li", { text: byId.get(id).join(" ") });
    const a = h("a", { href: "#" + id, text: labelOf(id) });
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      const target = $(id) || document.querySelector(`input[name="${id}"]`);
      if (target) target.focus();
    });
    return h("li", {}, a);
  }));
  box.hidden = errors.length === 0;
}

export function ms(micro) {
  return B.formatMicro(micro) + " ms";
}

export function human(msValue) {
  return msValue >= 1000 ? "≈ " + duration(msValue) : "";
}

export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

export function listWords(xs) {
  if (xs.length <= 1) return xs.join("");
  return xs.slice(0, -1).join(", ") + " and " + xs[xs.length - 1];
}
