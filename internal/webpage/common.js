// Shared by the browser pages of pageclass-api and translate-api
// (internal/webpage, served as /frontend/common.js before the page's own
// script): the service's calls with its token, and its errors in words.
"use strict";
const $ = (id) => document.getElementById(id);

// tokenKey is where this tab keeps the service's token (sessionStorage);
// refusedKey notes that the last token given was not accepted, so that the
// next question says so (the token itself is forgotten).
const tokenKey = "archivekit-token";
const refusedKey = "archivekit-token-refused";

// afterToken, when a page sets it, runs once a token it asked for was
// accepted: the parts of the page read without one are read again.
let afterToken = null;

// tokenDeclined is set when the person gave no token or one that was not
// accepted: the page asks no more until its next Classify or Translate
// (newAttempt); a batch of four files asked four times.
let tokenDeclined = false;

// newAttempt starts a person's new attempt (a Classify, a Translate): a
// token is asked for again when needed.
function newAttempt() { tokenDeclined = false; }

// askToken asks for the service's token in a dialog whose field does not
// show what is typed (window.prompt showed it), and resolves to the token,
// or null when the person cancels.
function askToken(message) {
  let d = $("token-dialog");
  if (!d) {
    d = document.createElement("dialog");
    d.id = "token-dialog";
    d.innerHTML = '<form method="dialog"><p id="token-message"></p>' +
      '<label>Access token <input id="token-input" type="password" autocomplete="off" spellcheck="false"></label>' +
      '<p class="token-buttons"><button id="token-send" value="send">Send</button> <button value="cancel" formnovalidate>Cancel</button></p></form>';
    document.body.appendChild(d);
  }
  $("token-message").textContent = message;
  $("token-input").value = "";
  d.returnValue = "";
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "send" ? $("token-input").value : null), { once: true });
    d.showModal();
    $("token-input").focus();
  });
}

// unreachable is the words for a request that got no answer at all (the
// browser's own "Failed to fetch").
const unreachable = "the service cannot be reached (is it running, and is this computer online?); try again in a moment.";

// base is the path the page finds the service under: "" at the root of its
// host, "/pageclass" behind a reverse proxy that publishes it there (the
// page is at base + "/frontend"); api sends a service path ("/info") under
// it. rootPath is the service's ROOT_PATH (its /info's root_path, noteInfo),
// which begins the links it gives (a job's Location and results): those
// are sent as they are.
const base = location.pathname.replace(/\/frontend\/?$/, "");
let rootPath = "";

// noteInfo keeps the service's root_path from its /info answer, and
// returns the answer.
function noteInfo(info) {
  if (info && typeof info.root_path === "string") rootPath = info.root_path;
  return info;
}

// under is url, a service path or a link the service gave, as this page
// must ask for it (see base).
function under(url) {
  if (!url.startsWith("/") || url.startsWith("//") || (rootPath && url.startsWith(rootPath + "/"))) return url;
  return base + url;
}

// api is fetch with the service's bearer token when it asks for one
// (API_TOKEN on the server): on a 401 the page asks for the token once per
// attempt (newAttempt), keeps it for this tab and sends the request again.
// A token that was sent and refused is forgotten, so that the next attempt
// asks again, and the question says it was not accepted. ask false sends
// without asking: a 401 is returned as it came. A request that gets no
// answer throws an Error in words.
async function api(url, opts = {}, ask = true) {
  url = under(url);
  const send = async () => {
    const token = sessionStorage.getItem(tokenKey);
    const headers = Object.assign({}, opts.headers || {});
    if (token) headers["Authorization"] = "Bearer " + token;
    try {
      return await fetch(url, Object.assign({}, opts, { headers }));
    } catch (e) {
      if (e && e.name === "AbortError") throw e;
      throw new Error(unreachable);
    }
  };
  const had = Boolean(sessionStorage.getItem(tokenKey));
  let r = await send();
  if (r.status === 401 && ask && !tokenDeclined) {
    if (had) sessionStorage.removeItem(tokenKey);
    const token = await askToken(had || sessionStorage.getItem(refusedKey)
      ? "The access token given was not accepted. Enter the service's access token (ask whoever runs it):"
      : "This service needs an access token (ask whoever runs it):");
    if (token && token.trim()) {
      sessionStorage.setItem(tokenKey, token.trim());
      r = await send();
      if (r.status === 401) {
        sessionStorage.removeItem(tokenKey);
        sessionStorage.setItem(refusedKey, "1");
        tokenDeclined = true;
      } else {
        sessionStorage.removeItem(refusedKey);
        if (afterToken) afterToken();
      }
    } else {
      tokenDeclined = true;
    }
  }
  return r;
}

// detailText turns an error body into a sentence: detail is a string for
// the service's own errors and a list for validation errors.
function detailText(body, status) {
  if (body && typeof body.detail === "string") return body.detail;
  if (body && Array.isArray(body.detail)) {
    return body.detail.map((e) => (e.loc || []).slice(1).join(".") + ": " + e.msg).join("\n");
  }
  if (status === 502 || status === 503 || status === 504) {
    return "the service is not available now (" + status + ", from it or from a proxy in front of it); try again in a minute.";
  }
  return "The service answered " + status + ".";
}

// errorWords are a page's words for an error, by the service's reason code
// or, without one for it, by status, each a function of the service's
// detail: what a person reads instead of it (a page adds its own: what it
// takes, how large).
const errorWords = {
  401: () => "the service needs an access token and none was accepted; send again to enter it (ask whoever runs the service for it).",
};

// tooLargeForProxy is the words for a 413 that a proxy in front of the
// service answered: the service's own limit was not reached.
const tooLargeForProxy = "the upload was refused as too large before it reached the service, by a proxy in front of it whose limit is lower than the service's; send a smaller file, or ask whoever runs the service to raise the proxy's limit.";

// answerOf reads a response's JSON body (null when it is not JSON) and
// throws an Error with the error in words (errorWords, else the service's
// detail) when the response is not a success; its reason is the service's
// reason code (job_not_found, ...).
async function answerOf(r) {
  let body = null;
  try { body = await r.json(); } catch (_) { /* not JSON */ }
  if (!r.ok) {
    const detail = detailText(body, r.status);
    // A 413 that is not the service's own (no reason code: a reverse
    // proxy's page) is the proxy's size limit, not the service's.
    const proxied = r.status === 413 && !(body && body.reason);
    const words = proxied ? () => tooLargeForProxy : (body && errorWords[body.reason]) || errorWords[r.status];
    const e = new Error("Error " + r.status + ": " + (words ? words(detail) : detail));
    e.reason = body && body.reason;
    throw e;
  }
  return body;
}
