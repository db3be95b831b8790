// miniplane RBAC insight page. Read-only: it lists and watches RBAC objects and asks the insight kinds
// (insight.<domain>/v1), every request made with the signed-in user's credentials (a bearer token kept
// in sessionStorage, or the browser's client certificate). Data is written with textContent only.
"use strict";

const TOKEN_KEY = "miniplane-token";
const KINDS = [["clusterroles", "ClusterRole"], ["roles", "Role"],
               ["clusterrolebindings", "ClusterRoleBinding"], ["rolebindings", "RoleBinding"]];
const state = {groups: {}, objects: {}, errors: {}, watches: [], refresh: null, shown: null};
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

function headers(extra) {
  const h = {Accept: "application/json", ...extra};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) h.Authorization = "Bearer " + token;
  return h;
}

async function api(method, path, body) {
  const init = {method, headers: headers(body ? {"Content-Type": "application/json"} : {})};
  if (body) init.body = JSON.stringify(body);
  const r = await fetch(path, init);
  const doc = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(doc.message || `${method} ${path}: ${r.status}`);
  return doc;
}

function ask(kind, plural, spec) {
  const gv = `${state.groups.insight}/v1`;
  return api("POST", `/apis/${gv}/${plural}`, {apiVersion: gv, kind, spec: spec || {}});
}

// ---- sign-in ------------------------------------------------------------------------------------

async function whoami() {
  const gv = `${state.groups.authentication}/v1`;
  const review = await api("POST", `/apis/${gv}/selfsubjectreviews`, {apiVersion: gv, kind: "SelfSubjectReview"});
  return review.status.userInfo;
}

async function start() {
  // Without a token the browser may still hold a client certificate: try, and ask for a token quietly.
  const quiet = (e) => signIn(sessionStorage.getItem(TOKEN_KEY) ? e.message : "");
  let found;
  try {
    found = (await api("GET", "/apis")).groups.map((g) => g.name);
  } catch (e) {
    return quiet(e);
  }
  for (const prefix of ["rbac.authorization", "insight", "authentication"]) {
    const name = found.find((g) => g.startsWith(prefix + "."));
    state.groups[prefix === "rbac.authorization" ? "rbac" : prefix] = name;
  }
  let user;
  try {
    user = await whoami();
  } catch (e) {
    return quiet(e);
  }
  if (!user.username || user.username === "system:anonymous") return signIn("");
  $("#whoami").textContent = "signed in as " + user.username;
  $("#sign-out").hidden = !sessionStorage.getItem(TOKEN_KEY);
  $("#sign-in").hidden = true;
  $("#tabs").hidden = false;
  $("#main").hidden = false;
  await loadPolicy();
}

function signIn(message) {
  $("#sign-in").hidden = false;
  $("#sign-in-error").textContent = message || "";
}

$("#sign-in").addEventListener("submit", (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("#token").value.trim());
  $("#token").value = "";
  start();
});
$("#sign-out").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  location.reload();
});

// ---- the policy, listed then watched -----------------------------------------------------------

const keyOf = (o) => `${o.metadata.namespace || ""}/${o.metadata.name}`;

async function loadPolicy() {
  for (const w of state.watches) w.abort();
  state.watches = [];
  await Promise.all(KINDS.map(([plural]) => listAndWatch(plural)));
}

async function listAndWatch(plural) {
  const path = `/apis/${state.groups.rbac}/v1/${plural}`;
  let list;
  try {
    list = await api("GET", path);
  } catch (e) {
    state.errors[plural] = e.message;
    renderPolicy();
    return;
  }
  delete state.errors[plural];
  state.objects[plural] = new Map(list.items.map((o) => [keyOf(o), o]));
  renderPolicy();
  const control = new AbortController();
  state.watches.push(control);
  watch(plural, path, list.metadata.resourceVersion, control);
}

async function watch(plural, path, version, control) {
  const url = `${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(version)}`;
  try {
    const r = await fetch(url, {headers: headers(), signal: control.signal});
    if (!r.ok) throw new Error(`watch ${plural}: ${r.status}`);
    setLive(true);
    const reader = r.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true});
      let at;
      while ((at = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, at).trim();
        buffer = buffer.slice(at + 1);
        if (!line) continue;
        const event = JSON.parse(line);
        if (event.type === "ERROR") throw new Error(event.object.message);
        version = event.object.metadata.resourceVersion || version;
        if (event.type === "BOOKMARK") continue;
        if (event.type === "DELETED") state.objects[plural].delete(keyOf(event.object));
        else state.objects[plural].set(keyOf(event.object), event.object);
        changed();
      }
    }
  } catch (e) {
    if (control.signal.aborted) return;
  }
  setLive(false);
  // The stream ended (timeout, compaction, restart): list again, then watch again.
  setTimeout(() => { if (!control.signal.aborted) listAndWatch(plural); }, 1000);
}

function setLive(on) {
  $("#live").textContent = on ? "live" : "offline";
  $("#live").className = "badge " + (on ? "on" : "off");
}

function changed() {
  renderPolicy();
  clearTimeout(state.refresh);
  state.refresh = setTimeout(() => { if (state.shown) state.shown(); }, 300);
}

function items(plural) {
  return [...(state.objects[plural] || new Map()).values()];
}

function subjectsOf(binding) {
  const ns = binding.metadata.namespace || "";
  return (binding.subjects || []).map((s) => ({kind: s.kind, name: s.name,
    namespace: s.kind === "ServiceAccount" ? (s.namespace || ns) : ""}));
}

function matches(query, ...values) {
  return !query || values.join(" ").toLowerCase().includes(query);
}

function renderPolicy() {
  const query = $("#search").value.trim().toLowerCase();
  const bindings = [...items("clusterrolebindings"), ...items("rolebindings")];
  const subjects = new Map();
  for (const b of bindings) {
    for (const s of subjectsOf(b)) {
      const key = `${s.kind}/${s.namespace}/${s.name}`;
      if (!subjects.has(key)) subjects.set(key, {...s, bindings: []});
      subjects.get(key).bindings.push(b.metadata.name);
    }
  }
  const subjectRows = [...subjects.values()].filter((s) => matches(query, s.kind, s.name, s.namespace, s.bindings))
    .sort((a, b) => (a.kind + a.name).localeCompare(b.kind + b.name))
    .map((s) => el("tr", {class: "clickable", onclick: () => showMatrixOf(s)},
      el("td", {}, s.kind), el("td", {}, s.name), el("td", {}, s.namespace), el("td", {}, s.bindings.join(", "))));
  $("#subjects-table tbody").replaceChildren(...subjectRows);
  $("#subjects-count").textContent = `(${subjectRows.length})`;
  const bindingRows = bindings.filter((b) => matches(query, b.kind, keyOf(b), b.roleRef.name,
    subjectsOf(b).map((s) => s.name))).map((b) => el("tr", {"data-name": b.metadata.name},
      el("td", {}, b.kind), el("td", {}, b.metadata.namespace || ""), el("td", {}, b.metadata.name),
      el("td", {}, `${b.roleRef.kind} ${b.roleRef.name}`),
      el("td", {}, subjectsOf(b).map((s) => `${s.kind} ${s.namespace ? s.namespace + "/" : ""}${s.name}`).join(", "))));
  $("#bindings-table tbody").replaceChildren(...bindingRows);
  $("#bindings-count").textContent = `(${bindingRows.length})`;
  const roles = [...items("clusterroles"), ...items("roles")];
  const roleRows = roles.filter((r) => matches(query, r.kind, keyOf(r))).map((r) => el("tr", {},
    el("td", {}, r.kind), el("td", {}, r.metadata.namespace || ""), el("td", {}, r.metadata.name),
    el("td", {}, (r.rules || []).length), el("td", {}, r.aggregationRule ? "yes" : "")));
  $("#roles-table tbody").replaceChildren(...roleRows);
  $("#roles-count").textContent = `(${roleRows.length})`;
  $("#policy-error").textContent = Object.entries(state.errors).map(([k, v]) => `${k}: ${v}`).join("\n");
}

$("#search").addEventListener("input", renderPolicy);

// ---- tabs and queries ---------------------------------------------------------------------------

function showTab(name) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll(".tab")) s.hidden = s.id !== "tab-" + name;
  state.shown = {graph: showGraph, lint: showLint}[name] || null;
  if (state.shown) state.shown();
}

for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));

function query(formId, run) {
  const form = $(formId);
  const go = async () => {
    const values = Object.fromEntries(new FormData(form).entries());
    try {
      $("#error").textContent = "";
      await run(values);
    } catch (e) {
      $("#error").textContent = e.message;
    }
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.shown = go;
    go();
  });
}

const list = (text) => (text || "").split(",").map((s) => s.trim()).filter(Boolean);

function attributes(v) {
  if (v.resource.startsWith("/")) return {nonResourceAttributes: {verb: v.verb, path: v.resource}};
  return {resourceAttributes: {verb: v.verb, resource: v.resource, group: v.group, subresource: v.subresource,
                               namespace: v.namespace, name: v.name}};
}

function table(head, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))));
}

const ref = (r) => r ? `${r.kind} ${r.namespace ? r.namespace + "/" : ""}${r.name}` : "";
function ruleText(rule) {
  if (!rule) return "";
  const targets = [...(rule.nonResourceURLs || [])];
  for (const g of rule.apiGroups || []) for (const r of rule.resources || []) targets.push(g ? `${r}.${g}` : r);
  const names = rule.resourceNames ? ` [${rule.resourceNames.join(",")}]` : "";
  return `${(rule.verbs || []).join(",")} ${[...new Set(targets)].join(",")}${names}`;
}

function showMatrixOf(subject) {
  const form = $("#matrix-form");
  const field = (name) => form.elements.namedItem(name);
  field("kind").value = subject.kind;
  field("name").value = subject.name;
  field("saNamespace").value = subject.namespace || "";
  field("groups").value = subject.kind === "User" ? "system:authenticated" : "";
  showTab("matrix");
  form.requestSubmit();
}

query("#matrix-form", async (v) => {
  const spec = {namespace: v.namespace};
  if (v.kind === "Group") Object.assign(spec, {groups: [v.name]});
  else if (v.kind === "ServiceAccount") {
    Object.assign(spec, {user: `system:serviceaccount:${v.saNamespace}:${v.name}`,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${v.saNamespace}`, "system:authenticated"]});
  } else Object.assign(spec, {user: v.name, groups: list(v.groups)});
  const m = (await ask("AccessMatrix", "accessmatrices", spec)).status;
  const marks = {allowed: ["✔", "allowed"], denied: ["✖", "denied"], allowedByWildcard: ["✔*", "wildcard"]};
  const rows = m.rows.map((r) => el("tr", {}, el("td", {}, r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource),
    m.verbs.map((verb) => el("td", {class: "mark " + marks[r.access[verb]][1], title: `${verb}: ${r.access[verb]}`},
      marks[r.access[verb]][0]))));
  $("#matrix-results").replaceChildren(
    el("p", {}, `${m.user || "(no user)"} ${(m.groups || []).join(", ")} — ${m.namespace || "cluster-wide"}`),
    el("table", {class: "matrix"}, el("thead", {}, el("tr", {}, el("th", {}, "Resource"), m.verbs.map((x) => el("th", {}, x)))),
      el("tbody", {}, rows)));
});

query("#whocan-form", async (v) => {
  const answer = (await ask("WhoCan", "whocans", attributes(v))).status;
  const rows = [];
  for (const s of answer.subjects || []) {
    const grants = s.grants && s.grants.length ? s.grants : [null];
    for (const g of grants) {
      rows.push([s.subject.kind, s.subject.name, s.subject.namespace || "",
        g ? ref(g.binding) : "(system:masters: allowed everything)", g ? ref(g.role) : "",
        g ? `rules[${g.ruleIndex}] ${ruleText(g.rule)}` : ""]);
    }
  }
  $("#whocan-results").replaceChildren(el("p", {}, `${(answer.subjects || []).length} subject(s)` +
      (answer.namespace ? ` in namespace ${answer.namespace}` : "")),
    table(["Kind", "Subject", "Namespace", "Binding", "Role", "Rule"], rows));
});

query("#explain-form", async (v) => {
  const spec = attributes(v);
  if (v.user || v.groups) Object.assign(spec, {user: v.user, groups: list(v.groups)});
  const e = (await ask("AccessExplanation", "accessexplanations", spec)).status;
  const out = [el("p", {class: "verdict " + (e.allowed ? "allowed" : "denied")},
    e.allowed ? "ALLOWED" : "DENIED", " ", e.reason || "")];
  if (e.grantedBy) out.push(el("p", {}, "Granted by ", ref(e.grantedBy.binding), " → ", ref(e.grantedBy.role),
    ` rules[${e.grantedBy.ruleIndex}]`));
  for (const note of e.notes || []) out.push(el("p", {class: "hint"}, note));
  out.push(el("h3", {}, `Near misses (${(e.nearMisses || []).length})`));
  out.push(el("ul", {id: "near-misses"}, (e.nearMisses || []).map((m) => el("li", {class: "near-miss"},
    el("b", {}, `${m.kind} · ${m.attribute}`), " ", m.message,
    m.suggestion !== undefined ? el("span", {class: "suggestion"}, ` → ${m.attribute} ${JSON.stringify(m.suggestion)}`) : ""))));
  out.push(el("h3", {}, `Bindings that apply (${(e.bindings || []).length})`));
  for (const b of e.bindings || []) {
    out.push(el("div", {class: "binding"}, el("b", {}, ref(b.binding)), " → ", ref(b.role), b.error ? ` (${b.error})` : "",
      el("ul", {}, (b.rules || []).map((r) => el("li", {class: r.matched ? "allowed" : ""},
        `rules[${r.index}] `, r.checks.map((c) => el("span", {class: "check " + (c.matched ? "ok" : "no"),
          title: `allowed: ${(c.allowed || []).join(", ")}`}, `${c.matched ? "✓" : "✗"} ${c.attribute}`)),
        r.aggregatedFrom ? ` (from ${r.aggregatedFrom.join(", ")})` : "")))));
  }
  $("#explain-results").replaceChildren(...out);
});

async function showLint() {
  const answer = (await ask("RBACLint", "rbaclints", {})).status;
  const out = [el("p", {}, `${(answer.findings || []).length} finding(s)`),
    table(["Severity", "Kind", "Object", "Path", "Message"], (answer.findings || []).map((f) =>
      [f.severity, f.kind, ref(f.object), f.path || "", f.message]))];
  for (const t of answer.terminatingNamespaces || []) {
    out.push(el("h3", {}, `Namespace ${t.name} is terminating`),
      table(["Kind", "Name", "Finalizers"], (t.blockers || []).map((b) => [b.kind, b.name, (b.finalizers || []).join(", ")])));
  }
  $("#lint-results").replaceChildren(...out);
}

async function showGraph() {
  const g = (await ask("AggregationGraph", "aggregationgraphs", {})).status;
  const nodes = new Map((g.nodes || []).map((n) => [n.name, {...n, level: 0}]));
  for (let round = 0; round < nodes.size; round++) {
    for (const e of g.edges || []) {
      nodes.get(e.aggregated).level = Math.max(nodes.get(e.aggregated).level, nodes.get(e.source).level + 1);
    }
  }
  const columns = [];
  for (const n of nodes.values()) (columns[n.level] = columns[n.level] || []).push(n);
  const W = 220, H = 30, GAP = 70, svgNS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNS, "svg");
  const rows = Math.max(1, ...columns.map((c) => c.length));
  svg.setAttribute("width", columns.length * (W + GAP));
  svg.setAttribute("height", rows * (H + 14) + 10);
  columns.forEach((column, x) => column.forEach((n, y) => { n.x = x * (W + GAP) + 5; n.y = y * (H + 14) + 5; }));
  const add = (tag, attrs, text) => {
    const node = document.createElementNS(svgNS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text) node.textContent = text;
    svg.append(node);
  };
  add("marker", {id: "arrow", viewBox: "0 0 8 8", refX: 8, refY: 4, markerWidth: 8, markerHeight: 8, orient: "auto"});
  const head = document.createElementNS(svgNS, "path");
  head.setAttribute("d", "M0,0 L8,4 L0,8 z");
  head.setAttribute("class", "arrow");
  svg.lastChild.append(head);
  for (const e of g.edges || []) {
    const a = nodes.get(e.source), b = nodes.get(e.aggregated);
    add("path", {d: `M${a.x + W},${a.y + H / 2} C${a.x + W + GAP / 2},${a.y + H / 2} ${b.x - GAP / 2},${b.y + H / 2} ${b.x},${b.y + H / 2}`,
      class: "edge", "marker-end": "url(#arrow)"});
  }
  for (const n of nodes.values()) {
    add("rect", {x: n.x, y: n.y, width: W, height: H, rx: 4, class: n.aggregated ? "node aggregated" : "node"});
    add("text", {x: n.x + 8, y: n.y + H / 2 + 4}, `${n.name} (${n.rules})`);
  }
  $("#graph-results").replaceChildren(svg);
}

start();
