// Game recall on the dealer's screen (docs/control.md, "Game recall"; AGCO 13.1.1-13.1.4): a supervisor signs in,
// opens one of the last rounds (or a round by its number, ?round=N for a dispute) and steps through it as the
// journal has it. Reads GET /operator and GET /recall only: it changes nothing. The steps, their text and what a
// round not yet closed may show all come from the controller (controller/control/recall.py); this page only
// lays them out.
"use strict";

// Seconds the page waits for the server's answer (a server stopped or hung keeps the connection open and never
// answers): a recall reads the last rounds of the journal on the recall's one thread (from the store by its round
// index, a JSON-lines journal from its start), after another recall's reading at most; a sign-in checks the
// password (PBKDF2, up to 6,000,000 iterations: seconds on a slow or busy PC, at a lower priority than the table).
const RECALL_S = 20;
const SIGN_IN_S = 30;

let token = null;      // the supervisor's HTTP Basic credentials: in this page's memory only, never stored
let recalled = null;   // the round shown (GET /recall?round=N)
let shown = 0;         // how many of its steps are shown, the last of them the current one
let readings = 0;      // rounds read so far (data-readings of #recalled: a reading done shows there)

const $ = (id) => document.getElementById(id);

function make(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props || {});
  node.append(...children);
  return node;
}

function say(text, error = false) {
  $("answer").textContent = text;
  $("answer").className = error ? "error" : "";
}

// GET `path` with `credential` (HTTP Basic), given up after `seconds` (fetchWithin, page.js). Throws an Error whose
// message says what failed: "no answer from the server within N s", "cannot reach the server (...)" when nothing
// listens, or the status and the server's error (the error alone as its `refused`).
async function get(path, credential, seconds) {
  let response;
  try {
    response = await fetchWithin(path, {cache: "no-store", headers: {"Authorization": "Basic " + credential}},
                                 seconds);
  } catch (error) {
    throw new Error(error.name === "NoAnswer" ? `no answer from the server within ${seconds} s`
      : `cannot reach the server (${error.message})`);
  }
  const answer = await response.json();
  if (!response.ok) throw Object.assign(new Error(`${response.status} ${answer.error}`), {refused: answer.error});
  return answer;
}

const ask = (path) => get(path, token, RECALL_S);

function describe(item) {
  const marks = [item.status, item.test ? "test" : "", item.manual ? "dealt by hand" : ""].filter(Boolean);
  return `Round ${item.round} (${marks.join(", ")})`;
}

async function listRounds() {
  const answer = await ask("/recall");
  const list = $("rounds");
  list.replaceChildren();
  for (const item of answer.rounds) {
    const extra = [item.opened.slice(11, 19), item.faults ? `${item.faults} fault(s)` : "",
                   item.mispays ? `${item.mispays} mispay(s)` : ""].filter(Boolean).join(" · ");
    const button = make("button", {type: "button", className: item.status, textContent: `${describe(item)} ${extra}`});
    button.dataset.round = item.round;
    button.addEventListener("click", () => openRound(item.round, false, true));
    list.append(make("li", {}, button));
  }
  say(answer.rounds.length ? `the last ${answer.last} rounds at most; choose one` : "no round in the journal yet");
}

async function openRound(number, keep = false, refresh = false) {
  try {
    if (refresh) await listRounds();  // the list as the journal is now: the round open a minute ago has closed
    recalled = await ask(`/recall?round=${encodeURIComponent(number)}`);
  } catch (error) {
    say(`round ${number}: ${error.message}`, true);
    return;
  }
  shown = keep ? Math.min(shown, recalled.steps.length) : Math.min(1, recalled.steps.length);
  readings += 1;
  $("recalled").dataset.readings = readings;
  history.replaceState(null, "", `?round=${recalled.round}`);
  say(`round ${recalled.round} recalled`);
  render();
}

function render() {
  $("recalled").hidden = false;
  $("round-title").textContent = describe(recalled);
  $("filtered").hidden = !recalled.filtered;
  const list = $("steps");
  list.replaceChildren();
  recalled.steps.forEach((step, n) => {
    const item = make("li", {textContent: `${step.time.slice(11, 23)}  ${step.text}`,
                             className: n === shown - 1 ? "current" : "", hidden: n >= shown});
    item.dataset.seq = step.seq;
    item.dataset.type = step.type;
    list.append(item);
  });
  $("position").textContent = `step ${shown} of ${recalled.steps.length}`;
  $("first").disabled = $("previous").disabled = shown <= 1;
  $("next").disabled = $("last").disabled = shown >= recalled.steps.length;
  const current = list.querySelector(".current");
  if (current) current.scrollIntoView({block: "nearest"});
}

function step(to) {
  if (!recalled) return;
  shown = Math.max(Math.min(to, recalled.steps.length), Math.min(1, recalled.steps.length));
  render();
}

async function signIn(event) {
  event.preventDefault();
  const form = event.target;
  const user = form.elements.user.value;
  const candidate = btoa(unescape(encodeURIComponent(`${user}:${form.elements.password.value}`)));
  form.elements.password.value = "";
  say(`signing in ${user}…`);  // a password check may take seconds
  let answer;
  try {
    answer = await get("/operator", candidate, SIGN_IN_S);
  } catch (error) {
    say(error.refused ? `sign-in refused: ${error.refused}` : `sign-in of ${user}: ${error.message}; not signed in`,
        true);
    return;
  }
  if (answer.role !== "supervisor") {
    say(`${answer.user} is a ${answer.role}: recall needs a supervisor`, true);
    return;
  }
  token = candidate;
  form.querySelector(".who").textContent = `signed in: ${answer.user}`;
  try {
    await listRounds();
    const asked = new URLSearchParams(location.search).get("round");  // a dispute names its round
    if (asked !== null) await openRound(asked);
  } catch (error) {
    say(`recall: ${error.message}`, true);
  }
}

$("supervisor-form").addEventListener("submit", signIn);
$("round-form").addEventListener("submit", (event) => {
  event.preventDefault();
  if (!token) { say("a supervisor must sign in first", true); return; }
  const number = $("round-input").value.trim();
  if (!/^[0-9]{1,16}$/.test(number)) { say(`round number: a whole number, not "${number}"`, true); return; }
  openRound(number, false, true);
});
$("first").addEventListener("click", () => step(1));
$("previous").addEventListener("click", () => step(shown - 1));
$("next").addEventListener("click", () => step(shown + 1));
$("last").addEventListener("click", () => step(recalled ? recalled.steps.length : 0));
$("reload").addEventListener("click", async () => {
  if (!recalled) return;
  await listRounds().catch((error) => say(`recall: ${error.message}`, true));
  await openRound(recalled.round, true);
});
say("a supervisor signs in to recall a round");
