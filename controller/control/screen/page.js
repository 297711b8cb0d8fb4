// What every page of ours writes the same way: the dealer's screen (docs/control.md, "The dealer's screen") and
// the pit page (docs/backoffice.md, "The pit page", served from here as /pit/page.js).
"use strict";

// A new element with attributes (`class` as its class name) and children (nodes or text).
function element(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// Integer minor units in the table's currency (`currency` of the labels: its symbol and minor units) as
// "$1,234.50"; "+$5.00" when signed and positive, "-$5.00" below 0.
function formatMoney(minor, currency, signed = false) {
  const scale = 10 ** currency.minor_units;
  const whole = Math.floor(Math.abs(minor) / scale).toLocaleString("en-US");
  const part = currency.minor_units ? "." + String(Math.abs(minor) % scale).padStart(currency.minor_units, "0") : "";
  const sign = minor < 0 ? "-" : signed && minor > 0 ? "+" : "";
  return `${sign}${currency.symbol}${whole}${part}`;
}

// fetch(`url`, `options`) that gives up after `seconds`, its body read within them too: a server that is stopped
// (not gone) keeps the connection open and never answers, or stops part way through an answer, and a fetch alone
// would wait for ever. Returns a Response whose body is already here. Throws an Error named "NoAnswer" saying so,
// or fetch's own TypeError ("Failed to fetch") when nothing listens there.
async function fetchWithin(url, options, seconds) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), seconds * 1000);
  try {
    const response = await fetch(url, {...options, signal: abort.signal});
    const body = await response.arrayBuffer();  // the abort ends this read too
    const empty = [101, 204, 205, 304].includes(response.status);  // a Response of these may hold no body
    return new Response(empty ? null : body,
                        {status: response.status, statusText: response.statusText, headers: response.headers});
  } catch (error) {
    if (!abort.signal.aborted) throw error;
    const late = new Error(`no answer within ${seconds} s`);
    late.name = "NoAnswer";
    throw late;
  } finally {
    clearTimeout(timer);
  }
}
