// Browser interface of translate-api. Talks to the service it was served by.
"use strict";
// The service's calls (api, answerOf, errorWords) are common.js's
// (internal/webpage), loaded first.

// unitsShown is the most units listed on the page (the download holds all).
const unitsShown = 500;

// This page's words for the errors a person meets (common.js's errorWords).
errorWords[413] = () => "the document is larger than this service takes (" + $("max-mb").textContent + " MB).";
errorWords.not_well_formed = (d) => "this is not a well-formed XML document, so nothing was translated (" + d + ").";
errorWords.dtd_refused = (d) => "the document declares a DTD, which the service does not read (" + d + ").";
errorWords.unsupported_encoding = (d) => "the document's character encoding is not read (" + d + ").";
errorWords.nothing_translated = (d) => "nothing in this document was translated (" + d + ").";
errorWords.backend_error = (d) => "the translation service behind this one failed; try again later (" + d + ").";
errorWords.backend_unavailable = (d) => "the translation service behind this one is not available now; try again later (" + d + ").";

// The upload limit from /info, without asking for a token at load.
api("/info", {}, false).then((r) => (r.ok ? r.json() : null)).then(noteInfo).then((info) => {
  if (info && info.limits && info.limits.max_upload_mb) $("max-mb").textContent = info.limits.max_upload_mb;
}).catch(() => { /* the form still works */ });

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = false;
}

// decoded is the translated document's bytes: its text, or, for a document
// in another encoding than UTF-8, its base64 (the JSON answer's two forms).
function decoded(a) {
  if (typeof a.document === "string") return a.document;
  const bin = atob(a.document_base64 || "");
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

// count is "n word" with the word in the plural when n is not 1.
const count = (n, word) => n + " " + word + (n === 1 ? "" : "s");

// backendName names the backend and what it ran: a ct2 model's folder and
// the start of its digest, a chat API's model, the MT API's address.
function backendName(a) {
  const i = a.backend_info || {};
  if (i.ct2_model_dir) {
    return a.backend + ", model " + i.ct2_model_dir.split("/").pop() + " " + String(i.ct2_model_digest || "").slice(0, 19);
  }
  if (i.llm_model) return a.backend + ", model " + i.llm_model;
  if (i.translation_api) return a.backend + " at " + i.translation_api;
  return a.backend;
}

// showResult shows the JSON answer of /translate: the counts, the warnings,
// the units and the download.
function showResult(a) {
  const st = a.statistics || {};
  $("result-title").textContent = a.name;
  const langs = (a.source_lang || "?") + " → " + a.target_lang;
  // ALTO's units are its blocks (translated whole); the table lists their lines.
  const what = a.kind === "alto" ? count(st.units || 0, "block") + " of text (" + count(st.lines || 0, "line") + ")" : count(st.units || 0, "unit") + " of text";
  const parts = [what, st.translated + " translated"];
  if (st.skipped) parts.push(st.skipped + " left as they were");
  if (st.already_done) parts.push(st.already_done + " translated before");
  if (st.in_target) parts.push(st.in_target + " already in " + a.target_lang);
  $("summary").textContent = (a.kind || "document") + ", " + langs + ": " + parts.join(", ") + "; " +
    count(st.calls || 0, "call") + " to the translation backend (" + backendName(a) + ").";
  const list = $("warning-list");
  list.replaceChildren(...(a.warnings || []).map((w) => {
    const li = document.createElement("li");
    li.textContent = w;
    return li;
  }));
  $("warnings").hidden = !(a.warnings || []).length;
  const body = $("units").tBodies[0];
  body.replaceChildren();
  for (const u of (a.units || []).slice(0, unitsShown)) {
    const tr = body.insertRow();
    const status = u.unit_status === "approx_alignment" ? "words placed approximately" : u.unit_status || u.status;
    for (const v of [u.page, u.line, u.source, u.target, status]) tr.insertCell().textContent = v === undefined ? "" : v;
  }
  const n = (a.units || []).length;
  $("units-note").textContent = n > unitsShown ? "The first " + unitsShown + " of " + n + " units; the download holds them all." : "";
  const link = $("download");
  if (link.href) URL.revokeObjectURL(link.href);
  const type = a.kind === "hocr" ? "text/html" : "application/xml";
  link.href = URL.createObjectURL(new Blob([decoded(a)], { type }));
  link.download = a.name;
  link.textContent = "Download " + a.name;
  $("result").hidden = false;
}

// A field the browser refuses (its own message shown) hides an error of an
// earlier attempt, which no longer says what is wrong.
$("form").addEventListener("invalid", () => { $("error").hidden = true; }, true);

$("form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  newAttempt();
  $("error").hidden = true;
  $("result").hidden = true;
  const file = $("file").files[0];
  if (!file) { showError("Choose an XML document first."); return; }
  const fd = new FormData();
  fd.append("file", file, file.name);
  fd.append("source_lang", $("source").value.trim() || "auto");
  fd.append("target_lang", $("target").value.trim() || "en");
  if ($("mode").value) fd.append("output_mode", $("mode").value);
  fd.append("response_format", "json");
  $("submit").disabled = true;
  $("status").textContent = "Translating " + file.name + "… (a long document takes minutes)";
  // The time so far, beside the status line (not in it: a screen reader
  // would read it out each second), and Stop: a long document showed one
  // unchanging line for minutes, with no way to give up but leaving.
  const stop = new AbortController();
  const started = Date.now();
  const tick = setInterval(() => {
    $("elapsed").textContent = Math.round((Date.now() - started) / 1000) + " s so far";
  }, 1000);
  $("stop").hidden = false;
  $("stop").onclick = () => stop.abort();
  try {
    const a = await answerOf(await api("/translate", { method: "POST", body: fd, signal: stop.signal }));
    showResult(a);
    // Said by the status line (a screen reader reads it), and the focus
    // goes to the result (it was left on the page's body).
    $("status").textContent = "Translated " + a.name + ": " + $("summary").textContent;
    $("result-title").focus();
  } catch (e) {
    if (e && e.name === "AbortError") {
      $("status").textContent = "Stopped: " + file.name + " was not translated.";
    } else {
      $("status").textContent = "";
      showError(file.name + ": " + e.message);
    }
  } finally {
    clearInterval(tick);
    $("elapsed").textContent = "";
    $("stop").hidden = true;
    $("submit").disabled = false;
    if (!document.activeElement || document.activeElement === document.body) $("submit").focus();
  }
});
