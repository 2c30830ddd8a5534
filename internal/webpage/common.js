// Shared by the browser pages of pageclass-api and translate-api
// (internal/webpage, served as /frontend/common.js before the page's own
// script): the service's calls with its token, and its errors in words.
"use strict";
const $ = (id) => document.getElementById(id);

// tokenKey is where this tab keeps the service's token (sessionStorage).
const tokenKey = "archivekit-token";

// afterToken, when a page sets it, runs once a token it asked for was
// accepted: the parts of the page read without one are read again.
let afterToken = null;

// api is fetch with the service's bearer token when it asks for one
// (API_TOKEN on the server): on a 401 the page asks for the token, keeps
// it for this tab and sends the request again. A token that was sent and
// refused is forgotten, so that the next request asks again, and the
// question says it was not accepted. ask false sends without asking: a 401
// is returned as it came.
async function api(url, opts = {}, ask = true) {
  const send = () => {
    const token = sessionStorage.getItem(tokenKey);
    const headers = Object.assign({}, opts.headers || {});
    if (token) headers["Authorization"] = "Bearer " + token;
    return fetch(url, Object.assign({}, opts, { headers }));
  };
  const had = Boolean(sessionStorage.getItem(tokenKey));
  let r = await send();
  if (r.status === 401 && ask) {
    if (had) sessionStorage.removeItem(tokenKey);
    const token = window.prompt(had
      ? "The access token given was not accepted. Enter the service's access token (ask whoever runs it):"
      : "This service needs an access token (ask whoever runs it):");
    if (token && token.trim()) {
      sessionStorage.setItem(tokenKey, token.trim());
      r = await send();
      if (r.status === 401) sessionStorage.removeItem(tokenKey);
      else if (afterToken) afterToken();
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
  return "The service answered " + status + ".";
}

// errorWords are a page's words for an error, by the service's reason code
// or, without one for it, by status, each a function of the service's
// detail: what a person reads instead of it (a page adds its own: what it
// takes, how large).
const errorWords = {
  401: () => "the service needs an access token and none was accepted; send again to enter it (ask whoever runs the service for it).",
};

// answerOf reads a response's JSON body (null when it is not JSON) and
// throws an Error with the error in words (errorWords, else the service's
// detail) when the response is not a success; its reason is the service's
// reason code (job_not_found, ...).
async function answerOf(r) {
  let body = null;
  try { body = await r.json(); } catch (_) { /* not JSON */ }
  if (!r.ok) {
    const detail = detailText(body, r.status);
    const words = (body && errorWords[body.reason]) || errorWords[r.status];
    const e = new Error("Error " + r.status + ": " + (words ? words(detail) : detail));
    e.reason = body && body.reason;
    throw e;
  }
  return body;
}
