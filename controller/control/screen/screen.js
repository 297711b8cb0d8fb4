// The dealer's screen (docs/control.md, "The dealer's screen"). Reads GET /state, GET /events and the event
// stream GET /events/stream; sends POST /actions with the round guard (round and state of the view shown).
// It only ever receives what the secrecy filter lets out: no face-down card before its reveal.
"use strict";

const SUPERVISOR_ACTIONS = new Set(["acknowledge", "clear_fault", "void_round", "accept_mispay", "disable_table",
                                    "enable_table", "enter_test_mode", "leave_test_mode"]);
const VOID_CODES = ["misdeal", "device", "dispute", "other"];
const DISABLE_CODES = ["closed", "count", "maintenance", "dispute", "other"];  // docs/control.md, the table's locks
const LABELS = {open_betting: "Open betting", no_more_bets: "No more bets", confirm: "Confirm", reveal: "Reveal",
                exclude: "Exclude held seats", acknowledge: "Acknowledge", clear_fault: "Clear fault",
                void_round: "Void round", paid: "Seat paid", accept_mispay: "Accept mispay",
                disable_table: "Disable table", enable_table: "Enable table", enter_test_mode: "Enter test mode",
                leave_test_mode: "Leave test mode"};
const STEPS = {across: "across", down: "down", middle: "middle"};
const SEATS = [1, 2, 3, 4, 5, 6];

let view = null;            // the latest view (Round.view() and seq)
let cursor = 0;             // the last record seq seen
let round = {no: null, decisions: {}, settlements: {}, revealed: {}};
const credentials = {};     // role -> {user, token}: in this page's memory only, never stored
let stream = null;

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function money(minor) { return (minor / 100).toFixed(2); }

function card(text) {
  if (!text) return el("div", {class: "card back", "data-face": "down"});
  const red = text[1] === "h" || text[1] === "d";
  const suit = {c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660"}[text[1]];
  return el("div", {class: "card" + (red ? " red" : ""), "data-card": text}, text[0].replace("T", "10") + suit);
}

function newRound(no) {
  if (round.no !== no) round = {no, decisions: {}, settlements: {}, revealed: {}};
}

function takeRecord(record) {
  cursor = Math.max(cursor, record.seq);
  const data = record.data || {};
  if (record.type === "RoundOpened") newRound(data.round_no);
  if (data.round_no !== undefined && data.round_no !== round.no) return;
  if (record.type === "DecisionMade") {
    (round.decisions[data.seat] ||= {})[data.decision] = data.action === "fold" ? "fold" : money(data.amount);
  } else if (record.type === "SeatSettled") {
    round.settlements[data.seat] = data.settlement;
  } else if (record.type === "CardsRevealed") {
    round.revealed[data.step] = data.cards;
  }
}

function crossDealt(v) {
  return Object.values(v.seats || {}).some((s) => s.dealt);
}

function renderCross(v) {
  const turned = v.community || [];
  const order = [["across", 0], ["across", 1], ["down", 0], ["down", 1], ["middle", 0]];
  order.forEach(([step, i], n) => {
    const slot = $(`slot-${step}-${i}`);
    slot.replaceChildren();
    if (n < turned.length) slot.append(card(turned[n]));
    else if (crossDealt(v) && v.state !== "closed" && v.state !== "voided") slot.append(card(null));
    else slot.textContent = step;
  });
}

function renderSeats(v) {
  const box = $("seats");
  box.replaceChildren();
  for (const seat of SEATS) {
    const info = (v.seats || {})[String(seat)];
    const settled = round.no === v.round_no ? round.settlements[seat] : undefined;
    const node = el("div", {class: "seat" + (info ? "" : " empty") + (info && info.folded_at ? " folded" : ""),
                            id: `seat-${seat}`}, el("h3", {}, `Seat ${seat}`));
    if (info) {
      const wagers = el("dl");
      for (const [spot, amount] of Object.entries(info.wagers)) {
        wagers.append(el("dt", {}, spot.replaceAll("_", " ")), el("dd", {}, money(amount)));
      }
      node.append(wagers);
      const decided = (round.no === v.round_no && round.decisions[seat]) || {};
      for (const [decision, what] of Object.entries(decided)) {
        node.append(el("div", {class: "decision"}, `${decision}: ${what}`));
      }
      if (info.folded_at) node.append(el("div", {class: "decision"}, `folded at ${info.folded_at}`));
      const hole = el("div", {class: "hole"});
      const shown = settled && !settled.folded_at && settled.across_hand ? settled.across_hand.cards.slice(0, 2) : null;
      if (shown) hole.append(card(shown[0]), card(shown[1]));
      else if (info.dealt && !settled) hole.append(card(null), card(null));
      node.append(hole);
      if (settled) {
        const net = settled.net || 0;
        node.append(el("div", {class: "net " + (net >= 0 ? "win" : "lose")}, `settled ${net >= 0 ? "+" : ""}${money(net)}`));
      }
      node.append(...payoutSteps(v, seat));
    }
    box.append(node);
  }
}

// The payout check (docs/architecture.md, "The payout check"): per spot take / push / pay N and the seat's total;
// the seat being paid is marked, a reading that differed names its spots and differences.
function payoutSteps(v, seat) {
  const payout = v.payout;
  const plan = payout && payout.seats[String(seat)];
  if (!plan) return [];
  const done = !payout.to_pay.includes(seat);
  const list = el("ul", {class: "payout" + (payout.seat === seat ? " current" : "") + (done ? " done" : "")});
  for (const [spot, step] of Object.entries(plan.spots)) {
    if (step.action === "none") continue;
    const what = step.action === "pay" ? `pay ${money(step.pay)}` : step.action;
    list.append(el("li", {}, `${spot.replaceAll("_", " ")}: ${what}`));
  }
  const nodes = [el("div", {class: "payout-total"}, `${done ? "paid" : "to pay"} ${money(plan.total)}`), list];
  if (payout.seat === seat) {
    for (const d of payout.differences) {
      nodes.push(el("div", {class: "mispay"}, `${d.spot.replaceAll("_", " ")}: ${d.difference < 0 ? "short" : "over"} `
                    + `${money(Math.abs(d.difference))} (expected ${money(d.expected)}, seen ${money(d.seen)})`));
    }
  }
  return nodes;
}

function renderAlerts(v) {
  const box = $("alerts");
  box.replaceChildren();
  for (const fault of v.faults || []) {
    const may = v.allowed_actions.filter((a) => SUPERVISOR_ACTIONS.has(a)).map((a) => LABELS[a]);
    box.append(el("div", {class: "fault"}, el("strong", {}, `Fault: ${fault.cause}`),
                  ` (${fault.device || "table"}) ${fault.detail}. `,
                  may.length ? `A supervisor may: ${may.join(", ")}.` :
                    fault.resumable ? "Waiting for the devices before it can be cleared." : "Only a void ends the round."));
  }
  for (const item of v.pending_past_posting || []) {
    box.append(el("div", {class: "past"}, el("strong", {}, "Past-posting: "), JSON.stringify(item),
                  " \u2014 a supervisor must acknowledge."));
  }
}

function roleFor(action) {
  if (SUPERVISOR_ACTIONS.has(action)) return credentials.supervisor ? "supervisor" : null;
  return credentials.dealer ? "dealer" : credentials.supervisor ? "supervisor" : null;
}

function renderButtons(v) {
  const box = $("buttons");
  box.replaceChildren();
  for (const action of v.allowed_actions || []) {
    const button = el("button", {type: "button", "data-action": action,
                                 class: SUPERVISOR_ACTIONS.has(action) ? "supervisor" : ""}, LABELS[action] || action);
    if (!roleFor(action)) {
      button.disabled = true;
      button.title = SUPERVISOR_ACTIONS.has(action) ? "a supervisor must sign in" : "sign in first";
    }
    button.addEventListener("click", () => act(action));
    box.append(button);
  }
  $("void-form").hidden = !(v.allowed_actions || []).includes("void_round");
  $("disable-form").hidden = !(v.allowed_actions || []).includes("disable_table");
}

function render() {
  if (!view) return;
  newRound(view.round_no);
  $("round-no").textContent = view.round_no ?? "–";
  $("state").textContent = view.state;
  $("test-mode").hidden = !view.test_mode;  // NY 9 NYCRR 5319.58: test mode shown at all times
  const lock = (view.locks || []).find((l) => l.name !== "test_mode");
  $("lock").hidden = !lock;
  $("lock").textContent = lock ? lock.text : "";
  $("panel").textContent = view.display || view.prompt || "";
  $("panel").title = view.prompt || "";
  renderCross(view);
  renderSeats(view);
  renderAlerts(view);
  renderButtons(view);
}

function say(text, error = false) {
  $("answer").textContent = text;
  $("answer").className = error ? "error" : "";
}

async function act(action) {
  const role = roleFor(action);
  if (!role || !view) return;
  const body = {action, round: view.round_no, state: view.state};  // the round guard
  if (view.answers && view.answers[action] !== undefined) body.answers = view.answers[action];  // what it answers
  if (action === "void_round") body.code = $("void-code").value;
  if (action === "disable_table") body.code = $("disable-code").value;
  try {
    const response = await fetch("/actions", {method: "POST", cache: "no-store",
      headers: {"Content-Type": "application/json", "Authorization": "Basic " + credentials[role].token},
      body: JSON.stringify(body)});
    const answer = await response.json();
    if (response.status === 202) say(`${LABELS[action]}: sent as ${answer.queued.user}`);
    else say(`${LABELS[action]}: ${response.status} ${answer.error}`, true);
    if (response.status === 401) { delete credentials[role]; showSignIn(); render(); }
  } catch (error) {
    say(`${LABELS[action]}: not sent (${error.message}); the service may be restarting`, true);
  }
}

function showSignIn() {
  for (const role of ["dealer", "supervisor"]) {
    const form = $(`${role}-form`);
    form.querySelector(".who").textContent = credentials[role] ? `signed in: ${credentials[role].user}` : "";
  }
}

async function signIn(event) {
  event.preventDefault();
  const form = event.target;
  const role = form.dataset.role;
  const user = form.elements.user.value;
  const token = btoa(unescape(encodeURIComponent(`${user}:${form.elements.password.value}`)));
  form.elements.password.value = "";
  const response = await fetch("/operator", {cache: "no-store", headers: {"Authorization": "Basic " + token}});
  const answer = await response.json();
  if (response.status !== 200) { say(`sign-in refused: ${answer.error}`, true); return; }
  if (role === "supervisor" && answer.role !== "supervisor") {
    say(`${answer.user} is a ${answer.role}, not a supervisor`, true); return;
  }
  credentials[role] = {user: answer.user, token};
  say(`${answer.user} signed in (${answer.role})`);
  showSignIn();
  render();
}

async function catchUp() {
  // the records of the current round held by the service, then the view
  for (;;) {
    const response = await fetch(`/events?after=${cursor}`, {cache: "no-store"});
    if (!response.ok) throw new Error(`events ${response.status}`);
    const answer = await response.json();
    answer.records.forEach(takeRecord);
    cursor = answer.next;
    if (answer.records.length < 500) break;
  }
  const state = await fetch("/state", {cache: "no-store"});
  if (state.ok) { view = await state.json(); render(); }
}

function connect() {
  if (stream) stream.close();
  stream = new EventSource(`/events/stream?after=${cursor}`);
  stream.addEventListener("open", () => { $("link").textContent = "live"; $("link").className = ""; });
  stream.addEventListener("record", (event) => { takeRecord(JSON.parse(event.data)); render(); });
  stream.addEventListener("view", (event) => { view = JSON.parse(event.data); render(); });
  stream.addEventListener("missed", () => { stream.close(); start(); });
  stream.addEventListener("dropped", () => { stream.close(); setTimeout(start, 500); });
  stream.addEventListener("error", () => {
    $("link").textContent = "reconnecting"; $("link").className = "down";
    for (const button of $("buttons").querySelectorAll("button")) button.disabled = true;  // the view may be stale
    if (stream.readyState === EventSource.CLOSED) setTimeout(start, 1000);  // e.g. a 503: start again
  });
}

async function start() {
  try {
    await catchUp();
    connect();
  } catch (error) {
    $("link").textContent = "no link"; $("link").className = "down";
    setTimeout(start, 1000);  // the service is down or restarting
  }
}

function signInForm(role) {
  const title = role[0].toUpperCase() + role.slice(1);
  const form = el("form", {id: `${role}-form`, "data-role": role}, el("h2", {}, title),
                  el("input", {name: "user", autocomplete: "off", placeholder: "user", "aria-label": `${role} user`}),
                  el("input", {name: "password", type: "password", autocomplete: "off", placeholder: "password",
                               "aria-label": `${role} password`}),
                  el("button", {type: "submit"}, "Sign in"), el("span", {class: "who"}));
  form.addEventListener("submit", signIn);
  return form;
}

for (const code of VOID_CODES) $("void-code").append(el("option", {value: code}, code));
for (const code of DISABLE_CODES) $("disable-code").append(el("option", {value: code}, code));
$("signin").append(signInForm("dealer"), signInForm("supervisor"));
start();
