// The pit page (docs/backoffice.md, "The pit page"). Reads GET /api/labels (the columns, a report's figures and
// their units, the periods, the currency); once a supervisor signed in (GET /api/operator), GET /api/pit every
// `every` seconds (the server reads the store once for every browser) and, for the table clicked, GET /api/report
// and GET /api/plot.svg (the figures and the plot of `crisscross floor report`). Every figure comes counted by the
// server in integer minor units: the page keeps no rule of its own and only writes the values. The credentials
// stay in this page's memory (gone at a reload or a sign-out). A request the server does not answer in time (a
// server stopped or hung keeps the connection open) is given up, and the page says it is not live.
"use strict";

// Seconds the page waits for the server's answer: GET /api/pit is answered from memory at once, a report is read
// from the store when asked for, and a sign-in checks the password (PBKDF2, up to 6,000,000 iterations: seconds
// on a slow or busy PC, done at a lower priority than the pages) before it answers.
const ANSWER_S = 5;
const REPORT_S = 60;
const SIGN_IN_S = 30;

let labels = null;   // GET /api/labels
let token = null;    // the supervisor's "Basic ..." credential, in memory only
let timer = null;    // the next GET /api/pit
let chosen = null;   // {table, period} of the report shown
let health = null;   // the store's health of the last GET /api/pit (judged by the server)
const $ = (id) => document.getElementById(id);
const el = element;  // page.js

// The value at `key` of a row, a dotted path for one inside an object ("mispays.caught").
const valueAt = (row, key) => key.split(".").reduce((v, k) => (v === null || v === undefined ? v : v[k]), row);

function storeText(store) {
  const parts = [];
  if (store.held) parts.push(`${store.held} held past a gap`);
  if (store.open_gaps) parts.push(`${store.open_gaps} gap(s) open`);
  if (store.unread) parts.push(`${store.unread} unread`);
  if (store.behind) parts.push(`behind the table by ${store.behind} records`);
  return parts.length ? parts.join(", ") : "complete";
}

// The store's health in words: the server judged each store's state (controller/floor/store_health.py); the page
// only writes it, with the figures the server gave (whole seconds, the database's times).
function healthText(found) {
  const words = labels.store_health;
  if (found.state === "unknown") {
    return `${words.unknown}: ${found.why}. The figures may be stale without this page knowing.`;
  }
  const stores = found.stores.map((s) => {
    const at = (time) => new Date(time).toLocaleTimeString();
    let head = words[s.state];
    if (s.state === "silent") head += ` for ${s.age_seconds} s (last write at ${at(s.written_at)})`;
    else if (s.state === "stopped") head += ` at ${at(s.stopped_at)}`;
    else head += ` (last write ${s.age_seconds} s ago)`;
    return `${head}: ${s.store} on ${s.host} (process ${s.pid}, started ${new Date(s.started_at).toLocaleString()}), ` +
      `${s.pending} message(s) unwritten, ${s.skipped} skipped, ${s.refused} write(s) refused`;
  });
  return stores.join("; ") + (found.state === "writing" ? "." : ". The figures may be stale.");
}

function renderHealth(found) {
  health = found || {state: "unknown", why: "the server said nothing of it", stores: []};
  $("health").hidden = false;
  $("health").textContent = labels.store_health[health.state];
  $("health").className = health.state === "writing" || health.state === "unknown" ? health.state : "down";
  $("health-state").textContent = healthText(health);
  $("health-state").className = health.state === "writing" || health.state === "unknown" ? health.state : "down";
  $("health-state").setAttribute("role", health.state === "writing" ? "status" : "alert");
  $("tables").classList.toggle("stale", health.state !== "writing");
}

// A value as the page writes its unit (GET /api/labels).
function written(unit, value, row) {
  if (value === null || value === undefined) return "–";
  switch (unit) {
    case "money": return formatMoney(value, labels.currency);
    case "rate": return value.toFixed(1);
    case "percent": return `${value.toFixed(2)}%`;
    case "points": return `${value > 0 ? "+" : ""}${value.toFixed(2)}`;
    case "flag": return value ? "YES" : "no";
    case "mispays": return `${value[0]} · ${formatMoney(value[1], labels.currency)}`;
    case "status": return row && row.why ? `${value} (${row.why})` : value;
    case "store": return storeText(value);
    default: return String(value);
  }
}

function setLink(text, up) {
  $("link").textContent = text;
  $("link").className = up ? "up" : "down";
}

// GET `path` with the credential, given up after `seconds` (fetchWithin, page.js); a 401 or 403 signs out (the
// file changed, the user was removed).
async function ask(path, seconds = ANSWER_S) {
  const response = await fetchWithin(path, {cache: "no-store", headers: {"Authorization": token}}, seconds);
  if (response.status === 401 || response.status === 403) {
    const answer = await response.json();
    signOut(`Signed out: ${answer.error}`);
    throw new Error(answer.error);
  }
  if (!response.ok) {
    const answer = await response.json().catch(() => ({error: `HTTP ${response.status}`}));
    throw new Error(answer.error);
  }
  return response;
}

function cell(column, row) {
  const value = valueAt(row, column.key);
  const td = el("td", {"data-key": column.key, "data-value": JSON.stringify(value ?? null)});
  if (column.key === "table") td.append(el("button", {type: "button", class: "open"}, row.table));
  else td.textContent = written(column.unit, value, row);
  if (column.unit === "store" && health && health.state !== "writing") {
    td.textContent = `${labels.store_health[health.state]}; ${td.textContent}`;
  }
  return td;
}

function renderPit(pit) {
  $("day").textContent = pit.gaming_day || "–";
  $("as-of").textContent = pit.as_of ? `as of ${new Date(pit.as_of).toLocaleTimeString()}` : "";
  const store = pit.store || {ok: true};
  $("store-state").hidden = store.ok;
  $("store-state").textContent = store.ok ? "" : `The store cannot be read since ${store.since}: ${store.error}. ` +
    "The figures are those of the last reading.";
  setLink(store.ok ? "live" : "store unreachable", store.ok);
  renderHealth(pit.store_health);
  const seen = new Set();
  for (const row of pit.tables) {
    seen.add(row.table);
    let tr = [...$("rows").children].find((r) => r.dataset.table === row.table);
    if (!tr) {
      tr = el("tr", {"data-table": row.table});
      tr.addEventListener("click", () => openReport(row.table, "day"));
      $("rows").append(tr);
    }
    const cells = labels.columns.map((column) => cell(column, row));
    const before = Object.fromEntries([...tr.children].map((td) => [td.dataset.key, td.dataset.value]));
    for (const td of cells) if (before[td.dataset.key] !== undefined && before[td.dataset.key] !== td.dataset.value) {
      td.classList.add("changed");
    }
    tr.replaceChildren(...cells);
    tr.className = `${row.status}${chosen && chosen.table === row.table ? " chosen" : ""}`;
    tr.classList.toggle("changed", cells.some((td) => td.classList.contains("changed")));
  }
  for (const tr of [...$("rows").children]) if (!seen.has(tr.dataset.table)) tr.remove();
  $("more").hidden = !pit.more_tables;
  $("more").textContent = pit.more_tables ? `${pit.more_tables} more table(s) in the store are not listed.` : "";
}

async function poll() {
  clearTimeout(timer);
  if (!token) return;
  let every = 2;
  try {
    const pit = await (await ask("/api/pit")).json();
    every = pit.every || every;
    renderPit(pit);
  } catch (error) {
    if (!token) return;
    const silent = error.name === "NoAnswer";
    setLink(silent ? "no answer from the server" : "reconnecting", false);
    // the server says nothing now, of the store either: its last judgement is not repeated
    renderHealth({state: "unknown", stores: [], why: silent ? `the page's server does not answer (${error.message})`
      : `the page's server cannot be reached (${error.message})`});
  }
  timer = setTimeout(poll, every * 1000);
}

function showPeriods() {
  $("periods").replaceChildren(...Object.entries(labels.periods).map(([period, words]) => {
    const button = el("button", {type: "button", "data-period": period,
                                 "aria-pressed": String(chosen && chosen.period === period)}, words);
    button.addEventListener("click", () => openReport(chosen.table, period));
    return button;
  }));
}

async function openReport(table, period) {
  chosen = {table, period};
  for (const tr of $("rows").children) tr.classList.toggle("chosen", tr.dataset.table === table);
  $("report").hidden = false;
  $("report-title").textContent = `${table}: ${labels.periods[period]}`;
  showPeriods();
  $("report-answer").textContent = "reading…";
  const query = `table=${encodeURIComponent(table)}&period=${encodeURIComponent(period)}`;
  try {
    const report = await (await ask(`/api/report?${query}`, REPORT_S)).json();
    const svg = await (await ask(`/api/plot.svg?${query}`, REPORT_S)).text();
    if (!chosen || chosen.table !== table || chosen.period !== period) return;  // another one was asked for since
    $("report-bounds").textContent = `Gaming day ${report.gaming_day} (from ${report.day_start}); ` +
      `${report.begin ? new Date(report.begin).toLocaleString() : "the first record"} to ` +
      `${new Date(report.end).toLocaleString()}`;
    $("figures").replaceChildren(...labels.report.flatMap((field) => {
      const value = report[field.key];
      const dd = el("dd", {"data-key": field.key, "data-value": JSON.stringify(value ?? null)},
                    written(field.unit, value, report));
      if (field.unit === "flag" && value) dd.classList.add("flagged");
      return [el("dt", {}, field.label), dd];
    }));
    const plot = new DOMParser().parseFromString(svg, "image/svg+xml").documentElement;
    $("plot").replaceChildren(document.importNode(plot, true));
    $("report-answer").textContent = "";
  } catch (error) {
    $("report-answer").textContent = `The report cannot be read: ${error.message}`;
  }
}

function signOut(why) {
  token = null;  // the credential was in this page's memory only: nothing else to forget
  clearTimeout(timer);
  chosen = null;
  $("pit").hidden = $("report").hidden = true;
  $("rows").replaceChildren();
  $("sign-in").hidden = false;
  $("sign-out").hidden = true;
  $("health").hidden = true;
  $("who").textContent = "";
  $("sign-in-answer").textContent = why || "";
  setLink("signed out", false);
}

async function signIn(event) {
  event.preventDefault();
  const form = event.target;
  if (!labels) {  // the page has nothing to show yet
    $("sign-in-answer").textContent = "The page has not reached the server yet: not signed in; try again once it does";
    return;
  }
  const pair = `${form.elements.user.value}:${form.elements.password.value}`;
  const attempt = "Basic " + btoa(unescape(encodeURIComponent(pair)));
  form.elements.password.value = "";
  let response, answer;
  try {
    response = await fetchWithin("/api/operator", {cache: "no-store", headers: {"Authorization": attempt}},
                                 SIGN_IN_S);
    answer = await response.json();
  } catch (error) {
    $("sign-in-answer").textContent = `Cannot reach the server (${error.message}): not signed in`;
    return;
  }
  if (response.status !== 200) {
    $("sign-in-answer").textContent = `Sign-in refused: ${answer.error}`;
    return;
  }
  token = attempt;
  $("sign-in").hidden = true;
  $("sign-in-answer").textContent = "";
  $("pit").hidden = false;
  $("sign-out").hidden = false;
  $("who").textContent = `signed in: ${answer.user}`;
  poll();
}

// GET /api/labels, given up after ANSWER_S and asked again until the server answers; the link says why meanwhile.
async function readLabels() {
  try {
    const response = await fetchWithin("/api/labels", {cache: "no-store"}, ANSWER_S);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    labels = await response.json();
  } catch (error) {
    setLink(error.name === "NoAnswer" ? "no answer from the server" : "cannot reach the server", false);
    setTimeout(readLabels, 2000);
    return;
  }
  $("columns").replaceChildren(...labels.columns.map((column) => el("th", {scope: "col"}, column.label)));
  setLink("signed out", false);
}

// The form's own handlers at once: a sign-in before the labels are read is never the browser's own submission
// (it would put the password in the address).
$("sign-in").addEventListener("submit", signIn);
$("sign-out").addEventListener("click", () => signOut(""));
readLabels();
