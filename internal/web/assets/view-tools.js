// The published tool contracts.

import { factList, heading, link, ready, setTitle, setView, policyLabel } from "./console-kit.js";
import { h } from "./ui.js";
import { api, query } from "./dashboard-api.js";
import { msText, timeEl } from "./dashboard-format.js";

// ---------- tools ----------

export async function view(_, stale) {
  setTitle("Tools");
  const { tools } = await api("GET", "/v1/tools");
  if (stale()) return;
  const cards = tools.map((t) => {
    const ref = t.name + "@" + t.version;
    return h("article", { class: "card tool", id: ref, "data-tool": ref },
      h("div", { class: "card-head" }, h("h2", { class: "mono", text: ref }),
        h("span", { class: "actions" }, link("/jobs" + query({ tool: ref }), "Jobs", "button small"))),
      t.description ? h("p", { text: t.description }) : null,
      factList([
        ["Endpoint", link("/endpoints/" + encodeURIComponent(t.endpoint), t.endpoint)],
        t.delivery ? ["Delivered to", h("span", { class: "delivery-target" }, h("span", { class: "mono method", text: t.delivery.method || "POST" }), " ", h("span", { class: "mono url", text: t.delivery.url }))] : ["Run by", "workers that claim it"],
        t.delivery ? ["Signing", t.delivery.signed ? "Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature)" : "not signed"] : null,
        t.delivery && t.delivery.headers && Object.keys(t.delivery.headers).length ? ["Headers", h("span", { class: "mono", text: Object.keys(t.delivery.headers).sort().join(", ") })] : null,
        ["Timeout", t.timeoutMs == null ? "the endpoint's lease" : msText(t.timeoutMs)],
        ["Retry policy", t.retryPreset ? (t.retryPreset === "CUSTOM" ? policyLabel(t.retryPolicy) : t.retryPreset) : "the endpoint's policy"],
        ["Published", timeEl(t.createdAt)],
      ]),
      h("details", { class: "printed", open: true }, h("summary", { text: "Payload schema" }),
        h("pre", { class: "json", text: t.payloadSchema == null ? "any JSON payload" : JSON.stringify(t.payloadSchema, null, 2) })),
      t.retryPolicy ? h("details", { class: "printed" }, h("summary", { text: "Retry policy document" }), h("pre", { class: "json", text: JSON.stringify(t.retryPolicy, null, 2) })) : null);
  });
  setView(heading("Tools", "Published tool contracts. A contract never changes once published; a change is a new version."),
    cards.length ? h("div", { class: "tool-grid" }, cards) : h("p", { class: "card empty", text: "No tools published yet." }));
  if (location.hash) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView();
  ready();
}
