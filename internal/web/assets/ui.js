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
