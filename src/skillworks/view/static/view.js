// skillworks view: the trials table over /api/trials (filter, sort, search, pages) with live refresh.
// Every value from a run is put into the page as text (textContent), never as markup.
"use strict";

const LABELS = {
  run: "run", task: "task", condition: "condition", agent: "agent", outcome: "outcome",
  failure_mode: "failure mode", error_category: "error category", skill_used: "skill used",
};
const SORTS = ["finished", "task", "condition", "agent", "outcome", "reward", "tokens", "cost", "time"];
const PAGE = 200;
const state = { filters: {}, q: "", sort: "finished", order: "asc", offset: 0 };
let version = null;
let pending = null;

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function link(href, text) {
  const a = el("a", text);
  a.href = href;
  return a;
}

function fromHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  state.filters = {};
  for (const k of Object.keys(LABELS)) if (p.get(k)) state.filters[k] = p.get(k);
  state.q = p.get("q") || "";
  state.sort = SORTS.includes(p.get("sort")) ? p.get("sort") : "finished";
  state.order = p.get("order") === "desc" ? "desc" : "asc";
  state.offset = Math.max(0, parseInt(p.get("offset") || "0", 10) || 0);
}

function toHash() {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(state.filters)) if (v) p.set(k, v);
  if (state.q) p.set("q", state.q);
  if (state.sort !== "finished") p.set("sort", state.sort);
  if (state.order !== "asc") p.set("order", state.order);
  if (state.offset) p.set("offset", String(state.offset));
  history.replaceState(null, "", "#" + p.toString());
}

function query() {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(state.filters)) if (v) p.set(k, v);
  p.set("q", state.q);
  p.set("sort", state.sort);
  p.set("order", state.order);
  p.set("offset", String(state.offset));
  p.set("limit", String(PAGE));
  return "/api/trials?" + p.toString();
}

function fmt(value, digits) {
  return value === null || value === undefined ? "—" : Number(value).toFixed(digits);
}

function renderRuns(runs) {
  const body = document.querySelector("#runs tbody");
  body.replaceChildren();
  for (const r of runs) {
    const tr = el("tr");
    tr.append(el("td", r.run_id), el("td", r.trials, "num"), el("td", r.tasks, "num"),
      el("td", r.conditions.join(", ")), el("td", r.agents.join(", ")),
      el("td", Object.entries(r.outcomes).map(([k, v]) => `${k} ${v}`).join(" · ")));
    const rep = el("td");
    if (r.report) rep.append(link(r.report, "report.html"));
    tr.append(rep);
    body.append(tr);
  }
}

function renderFilters(facets) {
  const box = document.getElementById("filters");
  for (const [field, values] of Object.entries(facets)) {
    let select = document.getElementById("f-" + field);
    if (!select) {
      const label = el("label", LABELS[field] || field);
      select = el("select");
      select.id = "f-" + field;
      select.dataset.field = field;
      select.addEventListener("change", () => {
        state.filters[field] = select.value;
        state.offset = 0;
        refresh();
      });
      label.append(select);
      box.append(label);
    }
    const current = state.filters[field] || "";
    select.replaceChildren(el("option", "all"));
    select.firstChild.value = "";
    const seen = new Set();
    for (const [value, count] of values) {
      const o = el("option", `${value === "" ? "(none)" : value} (${count})`);
      o.value = value;
      seen.add(value);
      select.append(o);
    }
    if (current && !seen.has(current)) {
      const o = el("option", `${current} (0)`);
      o.value = current;
      select.append(o);
    }
    select.value = current;
  }
}

function renderTrials(data) {
  const body = document.querySelector("#trials tbody");
  body.replaceChildren();
  for (const r of data.rows) {
    const tr = el("tr");
    tr.dataset.trial = r.trial_id;
    const pages = el("td");
    if (r.page) pages.append(link(r.page, "trial"));
    for (const p of r.pairs) {
      pages.append(document.createTextNode(" "));
      pages.append(link(p.href, "vs " + p.baseline));
    }
    tr.append(
      el("td", r.task), el("td", r.condition), el("td", r.agent), el("td", r.trial_index, "num"),
      el("td", r.outcome, "outcome-" + r.outcome), el("td", fmt(r.reward, 2), "num"),
      el("td", r.failure_mode), el("td", r.error_category ? `${r.error_category}: ${r.error}` : "", "err"),
      el("td", r.skill_used === "yes" ? r.skills_invoked.join(", ") : "no"),
      el("td", Number(r.tokens).toLocaleString("en-US"), "num"),
      el("td", r.cost === null ? "unknown" : "$" + fmt(r.cost, 4), "num"), el("td", fmt(r.time, 1) + " s", "num"),
      pages);
    body.append(tr);
  }
  const end = data.offset + data.rows.length;
  document.getElementById("range").textContent = data.total ? `${data.offset + 1}–${end} of ${data.total}` : "0 of 0";
  document.getElementById("prev").disabled = data.offset <= 0;
  document.getElementById("next").disabled = end >= data.total;
  document.getElementById("status").textContent = `${data.total.toLocaleString("en-US")} trials match`;
  document.body.dataset.total = String(data.total);
  for (const th of document.querySelectorAll("#trials th[data-sort]")) {
    th.classList.toggle("sorted", th.dataset.sort === state.sort);
    th.classList.toggle("desc", th.dataset.sort === state.sort && state.order === "desc");
  }
}

async function getJSON(url) {
  const resp = await fetch(url, { cache: "no-store" });
  const data = await resp.json();
  if (!resp.ok) throw new Error(data.error || resp.statusText);
  return data;
}

async function refresh() {
  toHash();
  const url = query();
  pending = url;
  try {
    const data = await getJSON(url);
    if (pending !== url) return; // a newer request is on its way
    version = data.version;
    renderFilters(data.facets);
    renderTrials(data);
    document.body.dataset.ready = String(Number(document.body.dataset.ready || "0") + 1);
  } catch (err) {
    document.getElementById("status").textContent = "error: " + err.message;
  }
}

async function loadRuns() {
  const data = await getJSON("/api/runs");
  renderRuns(data.runs);
}

async function poll() {
  const live = document.getElementById("live");
  try {
    const data = await getJSON("/api/version");
    live.classList.remove("off");
    if (data.version !== version) {
      await loadRuns();
      await refresh();
      document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    }
  } catch (err) {
    live.classList.add("off");
  }
}

function setup() {
  fromHash();
  const sort = document.getElementById("sort");
  for (const s of SORTS) {
    const o = el("option", s);
    o.value = s;
    sort.append(o);
  }
  sort.value = state.sort;
  const order = document.getElementById("order");
  order.value = state.order;
  const q = document.getElementById("q");
  q.value = state.q;
  let timer = null;
  q.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { state.q = q.value; state.offset = 0; refresh(); }, 250);
  });
  sort.addEventListener("change", () => { state.sort = sort.value; state.offset = 0; refresh(); });
  order.addEventListener("change", () => { state.order = order.value; state.offset = 0; refresh(); });
  for (const th of document.querySelectorAll("#trials th[data-sort]")) {
    th.addEventListener("click", () => {
      if (state.sort === th.dataset.sort) state.order = state.order === "asc" ? "desc" : "asc";
      else { state.sort = th.dataset.sort; state.order = "asc"; }
      sort.value = state.sort;
      order.value = state.order;
      state.offset = 0;
      refresh();
    });
  }
  document.getElementById("prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - PAGE); refresh(); });
  document.getElementById("next").addEventListener("click", () => { state.offset += PAGE; refresh(); });
  document.getElementById("reset").addEventListener("click", () => {
    state.filters = {}; state.q = ""; q.value = ""; state.offset = 0; refresh();
  });
  document.getElementById("controls").addEventListener("submit", (e) => e.preventDefault());
  loadRuns().then(refresh);
  setInterval(poll, 2000);
}

document.addEventListener("DOMContentLoaded", setup);
