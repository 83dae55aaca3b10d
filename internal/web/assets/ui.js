// Small DOM helpers the pages share.

// $ finds an element by id.
export const $ = (id) => document.getElementById(id);

// h builds an element: props set attributes ("class" and "text" set the
// class name and the text; an "on…" function listens for that event; a
// value of undefined, null or false leaves the attribute out, true sets
// it empty); children are appended, arrays flattened and null, undefined
// and false skipped.
export function h(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

let toastTimer = 0;

// toast shows a message in the page's #toast for ms milliseconds.
export function toast(message, ms = 2600) {
  const t = $("toast");
  t.textContent = message;
  t.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove("show"), ms);
}

// ---- validation messages for people ----
// The checks mirror Go and produce Go's messages ("baseMs: 1e13 is not
// allowed; must be ... at most 1000000000000 milliseconds"). Beside a field
// labelled "Base delay" the API name is noise and long numbers are hard to
// read, so the pages show fieldText: the message without its "name: "
// prefix and with long integers grouped by thousands.

// groupDigits writes integers of five digits or more with thousands
// separators, leaving decimals, exponents and signs as they are.
export function groupDigits(s) {
  return s.replace(/(^|[^\d.eE])(\d{5,})(?![\d.eE])/g, (_, pre, d) => pre + BigInt(d).toLocaleString("en-US"));
}

// fieldText is a field's message as shown beside it.
export function fieldText(field, message) {
  const p = field + ": ";
  return groupDigits(message.startsWith(p) ? message.slice(p.length) : message);
}

// labelOf is what the page calls the input with this id: its <label> (or
// its fieldset's legend) without the unit, so a summary names fields the
// way the form does.
export function labelOf(id) {
  const el = document.getElementById(id);
  const label = document.querySelector(`label[for="${CSS.escape(id)}"]`) ||
    (el && el.tagName === "FIELDSET" ? el.querySelector("legend") : null) ||
    (el && el.closest("fieldset") ? el.closest("fieldset").querySelector("legend") : null);
  if (!label) return id;
  let text = "";
  for (const n of label.childNodes) if (!(n.nodeType === 1 && n.classList.contains("unit"))) text += n.textContent;
  return text.trim() || id;
}
