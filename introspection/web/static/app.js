"use strict";
// The rsbd introspection page: polls the JSON API and follows a tail (SSE).

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

async function api(path) {
  const r = await fetch(path, {cache: "no-store"});
  const body = await r.json();
  if (body.error !== undefined) throw new Error(body.error);
  return body.data;
}

function duration(s) {
  if (s === null || s === undefined) return "?";
  const a = Math.abs(s), sign = s < 0 ? "-" : "";
  if (a < 1e-3) return sign + Math.round(a * 1e6) + " µs";
  if (a < 1) return sign + (a * 1e3).toFixed(1) + " ms";
  if (a < 60) return sign + a.toFixed(1) + " s";
  if (a < 3600) return sign + Math.floor(a / 60) + " min";
  return sign + Math.floor(a / 3600) + " h " + Math.floor(a % 3600 / 60) + " min";
}

function rate(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
  return n >= 10 || n === 0 ? Math.round(n).toString() : n.toFixed(1);
}

function state(s) { return el("span", "state " + s, s); }

function participantList(ps) {
  const ul = el("ul");
  for (const p of ps) {
    const li = el("li", "participant");
    li.append(el("span", "id", p.id.slice(0, 8)), el("span", "kind", p.kind + (p.type ? "<" + p.type + ">" : "")),
              el("span", "scope", p.scope));
    li.title = p.id + "\n" + (p.transports || []).join("\n");
    if (p.children && p.children.length) li.append(participantList(p.children));
    ul.append(li);
  }
  return ul;
}

function renderHosts(snap) {
  const box = $("hosts");
  box.replaceChildren();
  let processes = 0, participants = 0;
  const count = (ps) => ps.reduce((n, p) => n + 1 + count(p.children || []), 0);
  if (!snap.children.length) { box.append(el("p", "empty", "no participants on the bus")); }
  const ul = el("ul");
  for (const h of snap.children) {
    const li = el("li", "host");
    const head = el("div", "head", h.hostname);
    head.append(state(h.state), el("span", "meta", "offset " + duration(h["clock-offset"]) + " · latency " + duration(h.latency)));
    li.append(head, el("div", "details", [h["machine-type"], h["software-type"], h["software-version"]].filter(Boolean).join(" · ")));
    const pl = el("ul");
    for (const p of h.children) {
      processes++;
      participants += count(p.children);
      const pli = el("li", "process");
      const ph = el("div", "head");
      ph.append(el("span", "pid", p["process-id"] + " "), document.createTextNode(p["display-name"] || p["program-name"]), state(p.state));
      ph.append(el("span", "meta", (p["commandline-arguments"] || []).join(" ")));
      const up = (Date.now() - Date.parse(p["start-time"])) / 1000;
      pli.append(ph, el("div", "details", "up " + duration(up) + " · " + (p["executing-user"] || "?") + " · RSB " +
                 (p["rsb-version"] || "?") + " · latency " + duration(p.latency) + " · " + (p.transports || []).join(", ")));
      pli.append(participantList(p.children));
      pl.append(pli);
    }
    li.append(pl);
    ul.append(li);
  }
  box.append(ul);
  $("summary").textContent = snap.children.length + " hosts · " + processes + " processes · " + participants + " participants";
}

function renderDaemons(ds) {
  const box = $("daemons");
  box.replaceChildren();
  if (!ds.length) { box.append(el("p", "empty", "no rsbd daemon answered")); return; }
  const ul = el("ul");
  for (const d of ds) {
    const li = el("li", "host");
    const head = el("div", "head", d.name);
    head.append(el("span", "meta", d.hostname + " · pid " + d.pid + " · " + d.version));
    const out = (d.traffic || []).filter((t) => t.direction === "out").reduce((n, t) => n + t["events-per-second"], 0);
    const inn = (d.traffic || []).filter((t) => t.direction === "in").reduce((n, t) => n + t["events-per-second"], 0);
    const drops = Object.entries(d.drops || {}).map(([k, v]) => k + "=" + v).join(" ") || "none";
    li.append(head, el("div", "details", (d.peers || []).length + " peers · " + d.connections + " clients · " +
              d["joined-groups"] + " groups · in " + rate(inn) + " ev/s · out " + rate(out) + " ev/s · drops " + drops));
    ul.append(li);
  }
  box.append(ul);
}

// internal is the root of the scopes RSB uses itself (introspection,
// daemon surveys); its sub-scopes are folded into one row unless shown.
const internal = "/__rsb/";
let showInternal = false;

// scopeTree sums each scope's rows into its super-scopes.
function scopeTree(rows) {
  const nodes = new Map();
  const node = (s) => {
    if (!nodes.has(s)) nodes.set(s, {scope: s, ev: 0, by: 0, n: 0});
    return nodes.get(s);
  };
  for (const r of rows) {
    if (!r.scope.startsWith("/")) { const n = node(r.scope); n.ev += r["events-per-second"]; n.by += r["bytes-per-second"]; n.n += r.events; continue; }
    let parts = r.scope.split("/").filter(Boolean);
    if (!showInternal && r.scope.startsWith(internal)) parts = parts.slice(0, 1);
    for (let i = 0; i <= parts.length; i++) {
      const n = node("/" + parts.slice(0, i).map((p) => p + "/").join(""));
      n.ev += r["events-per-second"]; n.by += r["bytes-per-second"]; n.n += r.events;
    }
  }
  return [...nodes.values()].sort((a, b) => a.scope.localeCompare(b.scope));
}

function renderScopes(rows) {
  const body = $("scopes").tBodies[0];
  body.replaceChildren();
  const tree = scopeTree(rows);
  if (!tree.length) { const tr = el("tr"); tr.append(el("td", "empty", "no events seen yet")); body.append(tr); return; }
  const top = Math.max(1, ...tree.filter((n) => n.scope !== "/").map((n) => n.ev));
  for (const n of tree) {
    const depth = n.scope === "/" ? 0 : n.scope.split("/").length - 2;
    const tr = el("tr", "row");
    const name = el("td", "scope", n.scope === "/" ? "/" : n.scope.split("/").slice(-2, -1)[0] + "/");
    name.style.paddingLeft = (4 + depth * 14) + "px";
    name.title = n.scope + " · " + n.n + " events seen";
    const bar = el("div", "bar");
    bar.style.width = Math.min(100, 100 * n.ev / top) + "%";
    name.append(bar);
    tr.append(name, el("td", "num", rate(n.ev)), el("td", "num", rate(n.by) + "B"));
    tr.onclick = () => {
      if (n.scope === internal) { showInternal = !showInternal; return; }
      startTail(n.scope);
    };
    if (n.scope === internal) name.title += " · click to " + (showInternal ? "fold" : "unfold") + " RSB's own scopes";
    body.append(tr);
  }
}

let source = null;

function startTail(sc) {
  $("tail-scope").value = sc;
  if (source) source.close();
  const list = $("tail");
  list.replaceChildren();
  source = new EventSource("api/tail?scope=" + encodeURIComponent(sc));
  source.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    const li = el("li", "event");
    const l1 = el("div", "line1");
    l1.append(el("span", "scope", ev.scope + (ev.method ? " " + ev.method : "")),
              el("span", "", ev["wire-schema"] + " · " + ev.size + " B · " + new Date(ev.time).toLocaleTimeString()));
    li.append(l1, el("div", "payload", ev.text !== undefined ? ev.text : "base64 " + (ev.base64 || "")));
    list.prepend(li);
    while (list.children.length > 200) list.lastChild.remove();
  };
}

$("tail-form").onsubmit = (e) => { e.preventDefault(); startTail($("tail-scope").value || "/"); };

async function poll(fn, path, render, every) {
  try { render(await api(path)); } catch (e) { $("summary").textContent = "error: " + e.message; }
  setTimeout(() => fn(fn, path, render, every), every);
}

poll(poll, "api/introspection/snapshot", renderHosts, 2000);
poll(poll, "api/scopes", renderScopes, 1000);
poll(poll, "api/daemons", renderDaemons, 5000);
const wanted = new URLSearchParams(location.search).get("tail");
if (wanted) startTail(wanted);
