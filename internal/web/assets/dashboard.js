// The Ratchet dashboard's shell: sign-in and the session shared with the
// dashboard's other tabs, the routes, navigation and the live updates' life
// cycle. One page routed on the client with the history API (the server
// answers every dashboard path with this shell). Each view is a module of
// its own, assets/view-<name>.js, built from the view kit (console-kit.js);
// it reads and writes only through the public /v1 API with the signed-in key
// (dashboard-api.js).
import { badge, failView, heading, link, navigate, ready, setTitle, setView, state, stopLive, toast } from "./console-kit.js";
import { DASHBOARD_ROUTES } from "./limits.js";
import { $, h } from "./ui.js";
import { ASK_MS, api, getKey, hooks, session, setKey } from "./dashboard-api.js";

// ---------- sign in ----------

function showSignin(message) {
  stopLive();
  state.token++;
  state.me = null;
  $("app").hidden = true;
  $("signin").hidden = false;
  setTitle("Sign in");
  const err = $("api-key-error");
  err.hidden = !message;
  err.textContent = message || "";
  $("api-key").setAttribute("aria-invalid", message ? "true" : "false");
  document.documentElement.dataset.view = "signin";
  ready();
  $("api-key").focus();
}

async function signIn(key) {
  const me = await api("GET", "/v1/me", undefined, key);
  setKey(key);
  state.me = me;
  $("signin").hidden = true;
  $("app").hidden = false;
  $("api-key").value = "";
  const p = me.project;
  $("session").replaceChildren("Signed in to project ", h("strong", { text: p.name }), " ",
    badge(p.plan + " plan", "plan"), " with ", h("span", { id: "key-scope", text: `a${me.key.scope === "owner" ? "n" : ""} ${me.key.scope} key` }), ".");
  render();
}

// ---------- routing ----------

// ROUTES is the list of views written once in Go (web.go,
// DashboardRoutes) and generated into limits.js: a path pattern per view,
// {id} a number and any other {name} one path segment. The view itself is
// the module assets/view-<name>.js, loaded on first use; it exports
// view(args, stale). TestDashboardRoutesHaveViews checks that every route
// has its module and every module its route.
const ROUTES = DASHBOARD_ROUTES.map((r) => ({
  name: r.name,
  re: new RegExp("^" + r.path.replace(/\{(\w+)\}/g, (_, p) => (p === "id" ? "(\\d+)" : "([^/]+)")) + "$"),
}));

// viewOf loads a view's module and returns its view function, failing
// loudly when the module has none.
async function viewOf(name) {
  const mod = await import(`./view-${name}.js`);
  if (typeof mod.view !== "function") throw new Error(`The dashboard's view-${name}.js exports no view.`);
  return mod.view;
}

function match(pathname) {
  for (const r of ROUTES) {
    const m = r.re.exec(pathname);
    if (m) return { route: r, args: m.slice(1).map(decodeURIComponent) };
  }
  return null;
}

// navSection mirrors web.NavSection: the header entry of a path.
function navSection(pathname) {
  const first = pathname.replace(/^\//, "").split("/")[0];
  return first === "endpoints" ? "/" : "/" + first;
}

function render() {
  if (!state.me) return;
  stopLive();
  const token = ++state.token;
  const m = match(location.pathname);
  const section = navSection(location.pathname);
  for (const a of document.querySelectorAll(".site-nav a")) {
    if (a.getAttribute("href") === section) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  document.documentElement.dataset.ready = "false";
  if (!m) {
    document.documentElement.dataset.view = "notfound";
    setView(heading("Not found", "There is no dashboard page at this address."), h("p", {}, link("/", "Go to the overview")));
    ready();
    return;
  }
  document.documentElement.dataset.view = m.route.name;
  setView(h("p", { class: "loading muted", text: "Loading…" }));
  const stale = () => token !== state.token;
  viewOf(m.route.name).then((view) => (stale() ? undefined : view(m.args, stale))).catch((e) => {
    if (!stale()) failView(e);
  });
}

// ---------- start ----------

// tabs is the session shared with the dashboard's other tabs in this
// browser (dashboard-api.js, session); set by init.
let tabs = null;

// signOut forgets the key in this tab and, unless another tab said so,
// tells the others to forget it too.
function signOut(message, fromOtherTab) {
  setKey("");
  if (!fromOtherTab && tabs) tabs.signedOut();
  showSignin("");
  toast(message);
}

// adoptKey signs in with a key another tab handed over, if this tab shows
// the sign-in form and nobody has started typing in it.
let adopting = false;
function adoptKey(key) {
  if (adopting || state.me || getKey() || $("api-key").value) return;
  adopting = true;
  state.focusNext = document.activeElement === $("api-key");
  signIn(key).catch(() => { showSignin(""); }).finally(() => { adopting = false; });
}

function init() {
  state.render = render;
  hooks.onUnauthenticated = () => {
    setKey("");
    showSignin("Your key is no longer accepted. Sign in again.");
  };
  tabs = session({
    onKey: adoptKey,
    onSignOut: () => { if (state.me || getKey()) signOut("Signed out in another tab; the key is gone from this one too.", true); },
  });
  $("signin-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const key = $("api-key").value.trim();
    if (!key) { showSignin("Paste an API key."); return; }
    $("signin-button").disabled = true;
    try {
      state.focusNext = true;
      await signIn(key);
      tabs.signedIn(key);
    } catch (e) {
      showSignin(e.status === 401 ? "This key was not accepted: it is unknown or revoked." : e.message);
    } finally {
      $("signin-button").disabled = false;
    }
  });
  $("signout").addEventListener("click", () => signOut("Signed out; the key is gone from this tab and the dashboard's other tabs."));
  // Dashboard links route on the client; everything else (the calculator,
  // new tabs, modified clicks) loads normally.
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest && ev.target.closest("a[href]");
    if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey || a.target) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !match(url.pathname) || !state.me) return;
    if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
    ev.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
  window.addEventListener("popstate", () => { state.focusNext = true; render(); });
  // Leaving the page closes its stream at once, so the connection is not
  // left to the browser's clean-up (a browser allows only a few per host).
  window.addEventListener("pagehide", stopLive);
  const key = getKey();
  if (key) {
    signIn(key).catch((e) => showSignin(e.status === 401 ? "Your key is no longer accepted. Sign in again." : e.message));
    return;
  }
  // A new tab: an open tab that answers signs it in (adoptKey); without an
  // answer soon, the form.
  if (!tabs.available) { showSignin(""); return; }
  document.documentElement.dataset.view = "handover";
  tabs.ask();
  setTimeout(() => { if (!adopting && !state.me && !getKey()) showSignin(""); }, ASK_MS);
}

init();
