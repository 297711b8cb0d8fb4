// The dealer's screen (docs/control.md, "The dealer's screen"). Reads GET /labels (the words: each action's label
// and role, the names of states, spots and hands, the currency), GET /state, GET /events and the event stream
// GET /events/stream, all of them again whenever the stream ends; sends POST /actions with the round guard (round
// and state of the view shown). Which role may send an action, and why an action is not allowed yet, come from
// the controller (the view's `actions`): the page keeps no list of its own. It only ever receives what the secrecy
// filter lets out: no face-down card before its reveal. The page is live only while the stream is heard from: an
// idle stream sends a heartbeat every `heartbeat_s` of the labels, and a longer silence (SILENCE times that)
// means the table no longer answers: every button is disabled and the stream opened anew.
"use strict";

const SEATS = [1, 2, 3, 4, 5, 6];
const ROLE_WORDS = {dealer: "Dealer", supervisor: "Supervisor"};
// How many heartbeat intervals without a frame the page waits before it takes the table for silent (22.5 s of
// the server's 15 s: a heartbeat late by half an interval is still heard), and at least LATE_S seconds past one
// interval: a busy server (a sign-in's password check, a loaded PC) is not taken for a silent one.
const SILENCE = 1.5;
const LATE_S = 5;
// The control interface's usual heartbeat interval (controller/control/app.py HEARTBEAT), until the labels give it.
const HEARTBEAT_S = 15;

let words = null;           // GET /labels
let view = null;            // the latest view (Round.view() and seq)
let cursor = 0;             // the last record seq seen
let round = {no: null, settlements: {}};
const credentials = {};     // role -> {user, token}: in this page's memory only, never stored
let stream = null;
let live = false;           // the stream is open and was heard from within the silence allowed
let watchdog = null;        // the timer of that silence
let starting = false;       // start() is under way

const $ = (id) => document.getElementById(id);

const el = element;  // page.js

// Every amount in the table's currency (page.js): "$1,234.50", "+$5.00" when signed and positive.
const money = (minor, signed = false) => formatMoney(minor, words.currency, signed);

const spotName = (spot) => words.spots[spot] || spot;
// [spot, value] pairs in the order of the layout seen from the dealer (GET /labels lists the spots in it).
const inSpotOrder = (bySpot) => Object.keys(words.spots).filter((s) => s in bySpot).map((s) => [s, bySpot[s]]);
const actionLabel = (action) => (words.actions[action] || {label: action}).label;

function card(text) {
  if (!text) return el("div", {class: "card back", "data-face": "down", role: "img", "aria-label": "face down"});
  const red = text[1] === "h" || text[1] === "d";
  const suit = {c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660"}[text[1]];
  const rank = text[0].replace("T", "10");
  return el("div", {class: "card" + (red ? " red" : ""), "data-card": text}, rank + suit);
}

function newRound(no) {
  if (round.no !== no) round = {no, settlements: {}};
}

function takeRecord(record) {
  cursor = Math.max(cursor, record.seq);
  const data = record.data || {};
  if (record.type === "RoundOpened") newRound(data.round_no);
  if (data.round_no !== undefined && data.round_no !== round.no) return;
  if (record.type === "SeatSettled") round.settlements[data.seat] = data.settlement;
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
  });
}

// The seat's hands in words once settled in action (NY 5324.39(e)(9)): across, down, and the bonus hand if bet.
function handNames(settled) {
  const names = [];
  if (settled.across_hand) names.push(`Across: ${words.hands[settled.across_hand.category]}`);
  if (settled.down_hand) names.push(`Down: ${words.hands[settled.down_hand.category]}`);
  if (settled.five_card_bonus_hand && (settled.wagers || {}).five_card_bonus) {
    names.push(`Bonus: ${words.hands[settled.five_card_bonus_hand.category]}`);
  }
  return names.map((name) => el("div", {class: "hand"}, name));
}

// The payout check (docs/architecture.md, "The payout check"): per spot take / push / pay and the seat's total;
// the seat being paid is marked, a spot whose reading differed is marked with its difference.
function payoutRows(v, seat) {
  const payout = v.payout;
  const plan = payout && payout.seats[String(seat)];
  if (!plan) return null;
  const differs = {};
  if (payout.seat === seat) for (const d of payout.differences) differs[d.spot] = d;
  const list = el("dl", {class: "spots payout"});
  for (const [spot, step] of inSpotOrder(plan.spots)) {
    if (step.action === "none") continue;
    const what = {pay: `Pay ${money(step.pay)}`, take: `Take ${money(step.wager)}`, push: "Push"}[step.action];
    const d = differs[spot];
    list.append(el("dt", {}, spotName(spot)), el("dd", d ? {class: "mispay"} : {},
                   d ? `${d.difference < 0 ? "Short" : "Over"} ${money(Math.abs(d.difference))}` : what));
  }
  return list;
}

function renderSeats(v) {
  const box = $("seats");
  box.replaceChildren();
  for (const seat of SEATS) {
    const info = (v.seats || {})[String(seat)];
    const settled = round.no === v.round_no ? round.settlements[seat] : undefined;
    const classes = ["seat", info ? "" : "empty", info && info.folded_at ? "folded" : "",
                     info && !info.locked ? "unlocked" : "",
                     v.payout && v.payout.seat === seat ? "current" : ""].filter(Boolean).join(" ");
    const title = el("h2", {}, `Seat ${seat}`);
    const node = el("div", {class: classes, id: `seat-${seat}`}, title);
    box.append(node);
    if (!info) continue;
    if (!info.locked) title.append(el("span", {class: "tag"}, "on the felt"));
    if (settled) {
      const net = settled.net || 0;
      title.append(el("span", {class: "net " + (net >= 0 ? "win" : "lose")}, money(net, true)));
    }
    const hole = el("div", {class: "hole"});
    const shown = settled && !settled.folded_at && settled.across_hand ? settled.across_hand.cards.slice(0, 2) : null;
    if (shown) hole.append(card(shown[0]), card(shown[1]));
    else if (info.dealt && !settled) hole.append(card(null), card(null));
    if (hole.childElementCount || settled) {
      node.append(el("div", {class: "cards"}, hole, el("div", {class: "hands"}, ...(settled ? handNames(settled) : []))));
    }
    if (info.folded_at) node.append(el("div", {class: "decision"}, `Folded at ${info.folded_at}`));
    let rows = payoutRows(v, seat);
    if (!rows) {
      rows = el("dl", {class: "spots"});
      for (const [spot, amount] of inSpotOrder(info.wagers)) {
        rows.append(el("dt", {}, spotName(spot)), el("dd", {}, money(amount)));
      }
    }
    node.append(rows);
    const plan = v.payout && v.payout.seats[String(seat)];
    if (plan) {
      const done = !v.payout.to_pay.includes(seat);
      node.append(el("div", {class: "payout-total"}, `${done ? "Paid" : "To pay"} ${money(plan.total)}`));
      if (done) node.classList.add("done");
    }
  }
}

function renderAlerts(v) {
  const box = $("alerts");
  box.replaceChildren();
  const actions = v.actions || [];
  for (const fault of v.faults || []) {
    const may = actions.filter((a) => a.role === "supervisor" && a.reason === null).map((a) => a.label);
    const waiting = actions.find((a) => a.action === "clear_fault" && a.reason !== null);
    box.append(el("div", {class: "fault"}, el("strong", {}, `Fault: ${fault.cause.replaceAll("_", " ")}`),
                  ` (${fault.device || "table"}) ${fault.detail}. `,
                  may.length ? `A supervisor may: ${may.join(", ")}. ` : "",
                  waiting ? `Clear fault: ${waiting.reason}.` : ""));
  }
  for (const item of v.pending_past_posting || []) {
    box.append(el("div", {class: "past"}, el("strong", {}, "Past-posting: "),
                  `seat ${item.seat} ${spotName(item.spot)} locked at ${money(item.locked)}, now ${money(item.new)}. `,
                  "A supervisor must acknowledge."));
  }
  const payout = v.payout;
  if (payout && payout.differences.length) {
    box.append(el("div", {class: "fault mispay-box"}, el("strong", {}, `Seat ${payout.seat} mispay: `),
                  payout.differences.map((d) => `${spotName(d.spot)} ${d.difference < 0 ? "short" : "over"} `
                    + `${money(Math.abs(d.difference))} (expected ${money(d.expected)}, seen ${money(d.seen)})`)
                    .join("; "), ". Correct the chips and press Seat paid, or a supervisor accepts the mispay."));
  }
}

// Who sends an action: its role's own sign-in, or for a dealer's action a supervisor signed in alone (a
// supervisor may do everything a dealer may, controller/round/inputs.py ROLES).
function roleFor(entry) {
  if (entry.role === "supervisor") return credentials.supervisor ? "supervisor" : null;
  return credentials.dealer ? "dealer" : credentials.supervisor ? "supervisor" : null;
}

function renderButtons(v) {
  const box = $("buttons");
  box.replaceChildren();
  const actions = v.actions || [];
  for (const entry of actions) {
    const sender = roleFor(entry);
    const why = entry.reason !== null ? entry.reason
      : sender ? null : entry.role === "supervisor" ? "a supervisor must sign in" : "sign in first";
    const button = el("button", {type: "button", "data-action": entry.action, "data-role": entry.role,
                                 class: entry.role}, entry.label);
    button.disabled = why !== null || !live;  // never an action on a view that may be stale
    button.addEventListener("click", () => act(entry));
    const cell = el("div", {class: "action"}, button);
    if (why !== null) {
      const note = el("div", {class: "reason", id: `reason-${entry.action}`}, why[0].toUpperCase() + why.slice(1));
      button.setAttribute("aria-describedby", note.id);
      cell.append(note);
    }
    box.append(cell);
  }
  const allowed = (action) => actions.some((a) => a.action === action && a.reason === null);
  $("void-form").hidden = !allowed("void_round");
  $("disable-form").hidden = !allowed("disable_table");
}

// The header's line of what to do now, in words: the seat to pay and how much during the payout check.
function nextStep(v) {
  const payout = v.payout;
  if (!payout || payout.seat === null) return "";
  const total = payout.seats[String(payout.seat)].total;
  if (payout.differences.length) return `Seat ${payout.seat}: correct the payout`;
  // a seat whose wagers all lost or pushed is paid nothing: its chips are taken or left, then "Seat paid"
  return total ? `Pay seat ${payout.seat}: ${money(total)}` : `Seat ${payout.seat}: nothing to pay`;
}

function render() {
  if (!view || !words) return;
  newRound(view.round_no);
  $("round-no").textContent = view.round_no ?? "–";
  const state = words.states[view.state] || view.state;
  $("state").textContent = view.state === "fault" && view.phase !== "fault"
    ? `${state} (${(words.states[view.phase] || view.phase).toLowerCase()})` : state;
  $("state").dataset.state = view.state;
  $("test-mode").hidden = !view.test_mode;  // NY 9 NYCRR 5319.58: test mode shown at all times
  const lock = (view.locks || []).find((l) => l.name !== "test_mode");
  $("lock").hidden = !lock;
  $("lock").textContent = lock ? lock.text : "";
  $("next").textContent = nextStep(view);
  renderCross(view);
  renderSeats(view);
  renderAlerts(view);
  renderButtons(view);
}

function say(text, error = false) {
  $("answer").textContent = text;
  $("answer").className = error ? "error" : "";
}

async function act(entry) {
  const role = roleFor(entry);
  const action = entry.action;
  if (!role || !view) return;
  const body = {action, round: view.round_no, state: view.state};  // the round guard
  if (view.answers && view.answers[action] !== undefined) body.answers = view.answers[action];  // what it answers
  if (action === "void_round") body.code = $("void-code").value;
  if (action === "disable_table") body.code = $("disable-code").value;
  // A press is answered as soon as it is queued (the controller is not waited for), unless its credentials need a
  // password check (the first press after the service restarted): the time a sign-in is given, the silence allowed.
  const seconds = silence();
  try {
    const response = await fetchWithin("/actions", {method: "POST", cache: "no-store",
      headers: {"Content-Type": "application/json", "Authorization": "Basic " + credentials[role].token},
      body: JSON.stringify(body)}, seconds);
    const answer = await response.json();
    if (response.status === 202) say(`${entry.label}: sent as ${answer.queued.user}`);
    else say(`${entry.label}: refused (${response.status}) ${answer.error}`, true);
    if (response.status === 401) { delete credentials[role]; showSignIn(); render(); }
  } catch (error) {
    // Never sent again by the page: a press that reached the table late is refused once the round moved on (the
    // round guard), but a second one in the same state would be taken too (the next seat's "Seat paid").
    if (error.name === "NoAnswer") {
      say(`${entry.label}: no answer from the table within ${seconds} s; the press may not have reached it: ` +
          "look at the table before pressing again", true);
    } else say(`${entry.label}: not sent (${error.message}); the service may be restarting`, true);
  }
}

function showSignIn() {
  for (const role of Object.keys(ROLE_WORDS)) {
    const form = $(`${role}-form`);
    const who = credentials[role];
    form.querySelector(".who").textContent = who ? `signed in: ${who.user}` : "";
    form.classList.toggle("signed", Boolean(who));
    for (const input of form.querySelectorAll("input, button[type=submit]")) input.hidden = Boolean(who);
    form.querySelector(".sign-out").hidden = !who;
  }
}

async function signIn(event) {
  event.preventDefault();
  const form = event.target;
  const role = form.dataset.role;
  const user = form.elements.user.value;
  const token = btoa(unescape(encodeURIComponent(`${user}:${form.elements.password.value}`)));
  form.elements.password.value = "";
  let response, answer;
  try {
    response = await ask("/operator", {headers: {"Authorization": "Basic " + token}});
    answer = await response.json();
  } catch (error) {
    say(`Cannot reach the table (${error.message}): ${user} is not signed in; sign in again once it answers`, true);
    return;
  }
  if (response.status !== 200) { say(`Sign-in refused: ${answer.error}`, true); return; }
  if (role === "supervisor" && answer.role !== "supervisor") {
    say(`${answer.user} is a ${answer.role}, not a supervisor`, true); return;
  }
  credentials[role] = {user: answer.user, token};
  say(`${answer.user} signed in (${answer.role})`);
  showSignIn();
  render();
}

function signOut(role) {
  const who = credentials[role];
  delete credentials[role];  // the credentials were in this page's memory only: nothing else to forget
  if (who) say(`${who.user} signed out`);
  showSignIn();
  render();
}

// The silence allowed (seconds) before the table is taken for not answering: SILENCE heartbeats of the server's,
// one heartbeat and LATE_S at least; until the labels first give the server's, those of the interface's usual
// heartbeat (HEARTBEAT_S).
const silence = () => {
  const beat = words ? words.heartbeat_s : HEARTBEAT_S;
  return Math.max(beat * SILENCE, beat + LATE_S);
};

// GET `path` (`options` added) that gives up after the silence allowed.
const ask = (path, options = {}) => fetchWithin(path, {cache: "no-store", ...options}, silence());

// The link in the header, and every button disabled while it is not live.
function setLive(up, text) {
  live = up;
  $("link").textContent = text;
  $("link").className = up ? "" : "down";
  if (view && words) renderButtons(view);
}

async function catchUp() {
  // the words at every start (a service restarted may have another heartbeat interval or other codes), the records
  // of the current round held by the service, then the view
  const answer = await ask("/labels");
  if (!answer.ok) throw new Error(`labels ${answer.status}`);
  words = await answer.json();
  for (const [action, select] of [["void_round", "void-code"], ["disable_table", "disable-code"]]) {
    const chosen = $(select).value;  // kept when the service still offers it
    $(select).replaceChildren(...words.codes[action].map((code) => el("option", {value: code}, code)));
    if (words.codes[action].includes(chosen)) $(select).value = chosen;
  }
  for (;;) {
    const response = await ask(`/events?after=${cursor}`);
    if (!response.ok) throw new Error(`events ${response.status}`);
    const answer = await response.json();
    answer.records.forEach(takeRecord);
    cursor = answer.next;
    if (answer.records.length < 500) break;
  }
  const state = await ask("/state");
  if (state.ok) { view = await state.json(); render(); }
}

// The stream was heard from (any frame, a heartbeat too): the silence allowed starts again.
function heard() {
  clearTimeout(watchdog);
  watchdog = setTimeout(silent, silence() * 1000);
}

// Nothing heard for longer than the silence allowed: the table (or the way to it) stopped answering, though a
// stopped server keeps the connection open and the stream may never report an error. The stream is closed and
// the page starts again: it catches up once the table answers.
function silent() {
  if (stream) stream.close();
  stream = null;
  setLive(false, "no answer from the table");
  start();
}

function connect() {
  if (stream) stream.close();
  stream = new EventSource(`/events/stream?after=${cursor}`);
  heard();  // a stream that never opens is silent too
  stream.addEventListener("open", () => { heard(); setLive(true, "live"); });
  stream.addEventListener("heartbeat", heard);
  stream.addEventListener("record", (event) => { heard(); takeRecord(JSON.parse(event.data)); render(); });
  stream.addEventListener("view", (event) => { heard(); view = JSON.parse(event.data); render(); });
  stream.addEventListener("missed", () => { stream.close(); start(); });
  stream.addEventListener("dropped", () => { stream.close(); clearTimeout(watchdog); setTimeout(start, 500); });
  // The stream ended (the service stopped or restarted, a 503, a stream's end of life): the page starts again
  // itself, not by the browser's own reconnection, so that it reads the labels again (a service restarted may
  // have another heartbeat interval).
  stream.addEventListener("error", () => {
    stream.close();
    stream = null;
    clearTimeout(watchdog);
    setLive(false, "reconnecting");  // the view may be stale
    setTimeout(start, 1000);
  });
}

async function start() {
  if (starting) return;
  starting = true;
  clearTimeout(watchdog);
  try {
    await catchUp();
    connect();
  } catch (error) {
    setLive(false, error.name === "NoAnswer" ? "no answer from the table" : "no link");
    setTimeout(start, 1000);  // the service is down, restarting or stopped
  } finally {
    starting = false;
  }
}

function signInForm(role) {
  const out = el("button", {type: "button", class: "sign-out"}, "Sign out");
  out.hidden = true;
  out.addEventListener("click", () => signOut(role));
  const form = el("form", {id: `${role}-form`, "data-role": role}, el("h2", {}, ROLE_WORDS[role]),
                  el("span", {class: "who"}), out,
                  el("input", {name: "user", autocomplete: "off", placeholder: "user", "aria-label": `${role} user`}),
                  el("input", {name: "password", type: "password", autocomplete: "off", placeholder: "password",
                               "aria-label": `${role} password`}),
                  el("button", {type: "submit"}, "Sign in"));
  form.addEventListener("submit", signIn);
  return form;
}

$("signin").append(signInForm("dealer"), signInForm("supervisor"));
start();
