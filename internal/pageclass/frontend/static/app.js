// Browser interface of pageclass-api. Talks to the service it was served by.
"use strict";
// The service's calls (api, answerOf, detailText, errorWords) are common.js's
// (internal/webpage), loaded first.

// descriptions maps each category to its meaning (the glossary of /info).
const descriptions = {};

// Fill the model list and the category legend from /info; infoReady is
// settled once it is read (or could not be). A service that wants a token
// is not asked for one at load (the person has not done anything yet):
// the legend says so, and is read again once a token is accepted.
let infoLocked = false;
function readInfo() {
  return api("/info", {}, false).then((r) => {
    infoLocked = r.status === 401;
    if (infoLocked) {
      $("legend-note").textContent = "This service needs an access token: it is asked for when you classify, and the categories are shown then.";
      return;
    }
    return r.json().then(noteInfo).then(showInfo);
  }).catch(() => showError("The service did not answer /info."));
}

function showInfo(info) {
  const sel = $("version");
  sel.replaceChildren(sel.options[0]);
  for (const v of info.available_models || []) {
    if (v === "all") continue;
    const o = document.createElement("option");
    o.value = v;
    o.textContent = "model " + v;
    sel.appendChild(o);
  }
  $("topn").max = (info.categories || []).length || 11;
  jobsEnabled = (info.endpoints || []).some((e) => e.method === "POST" && e.path === "/jobs");
  if (info.limits && info.limits.max_pdf_pages) $("max-pages").textContent = info.limits.max_pdf_pages;
  if (info.limits && info.limits.max_upload_mb) $("max-mb").textContent = info.limits.max_upload_mb;
  const legend = $("legend-table").tBodies[0];
  legend.replaceChildren();
  for (const g of info.glossary || []) {
    descriptions[g.category] = g.description;
    const tr = legend.insertRow();
    tr.insertCell().textContent = g.category;
    tr.insertCell().textContent = g.description;
  }
  $("legend-note").textContent = "";
  if (info.glossary_document) $("glossary-doc").textContent = info.glossary_document;
}
const infoReady = readInfo();
afterToken = () => { if (infoLocked) readInfo(); };

function showError(text) {
  const e = $("error");
  e.textContent = text;
  e.hidden = false;
}

// doubtWords says in words why a page should be checked (its review's
// reasons), for a person: never margins, entropies or digests.
function doubtWords(rv, preds) {
  const words = [];
  for (const r of rv.reasons || []) {
    switch (r) {
      case "disagreement":
        words.push("models disagree (" + rv.agreement + " of " + rv.models + " chose " + rv.top1 + ")");
        break;
      case "low_margin":
        words.push("close second choice" + (preds && preds.length > 1 ? " (" + preds[1].label + ")" : ""));
        break;
      case "target_unreachable":
        words.push("low confidence");
        break;
      case "near_blank":
        words.push("nearly blank page");
        break;
      case "rotated":
        words.push("probably turned: rotate " + rv.rotation.angle + "° clockwise to read it");
        break;
    }
  }
  return words;
}

// reviewText is a page's review in one line: whether to check it and why.
function reviewText(rv, preds) {
  if (!rv) return "";
  if (rv.needs_review === true) return "Check this page: " + doubtWords(rv, preds).join("; ");
  if (rv.needs_review === false) return "No review needed";
  return "Not checked: no calibration for these models";
}

// reviewBox shows a page's review in words; a page condition (nearly
// blank, probably turned) is named only when it fires.
function reviewBox(rv, preds) {
  const box = document.createElement("div");
  box.className = "review";
  if (!rv) return box;
  const flag = document.createElement("div");
  flag.className = "flag " + (rv.needs_review === true ? "check" : rv.needs_review === false ? "ok" : "unknown");
  flag.textContent = reviewText(rv, preds);
  box.appendChild(flag);
  return box;
}

// noPreview is what a card shows instead of its thumbnail: why there is
// none, and a link to the page's image where it is elsewhere (a book's).
function noPreview(text, link) {
  const box = document.createElement("div");
  box.className = "no-preview";
  box.textContent = text;
  if (link) {
    const a = document.createElement("a");
    a.href = link;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.textContent = "Open the page's image.";
    box.append(" ", a);
  }
  return box;
}

// pictureOf is a card's thumbnail: thumb is a URL (a file of this tab, or
// the service's data: URL of a document's page), or, for a job's page
// image opened again, { fetch: the service's thumbnail of the file the job
// keeps or of a book's page, link: the page's image, shown if that fails },
// read once, when the card is first shown, or { none: why there is no
// preview, link }.
function pictureOf(thumb, title) {
  if (typeof thumb === "string" && thumb) {
    const img = document.createElement("img");
    img.src = thumb;
    img.alt = title;
    return img;
  }
  if (!thumb || !thumb.fetch) {
    return noPreview((thumb && thumb.none) || "No preview of this page: the service sent none.", thumb && thumb.link);
  }
  const img = document.createElement("img");
  img.alt = "preview of " + title + " (loading)";
  thumb.loading = thumb.loading || api(thumb.fetch).then(async (r) => {
    if (!r.ok) await answerOf(r); // throws the service's detail
    return URL.createObjectURL(await r.blob());
  });
  thumb.loading.then((src) => { img.src = src; img.alt = title; },
    (e) => img.replaceWith(noPreview("No preview for this page of a reopened job: " + e.message, thumb.link)));
  return img;
}

// cardElement is one page's card: its thumbnail (or why it has none),
// title, Top-N bars and review.
function cardElement({ title, thumb, preds, rv }) {
  const page = document.createElement("div");
  page.className = "page";
  page.appendChild(pictureOf(thumb, title));
  const box = document.createElement("div");
  box.className = "preds";
  const h = document.createElement("h2");
  h.textContent = title;
  box.appendChild(h);
  for (const p of preds) {
    const row = document.createElement("div");
    row.className = "pred";
    const label = document.createElement("span");
    label.className = "label";
    label.textContent = p.label;
    label.title = descriptions[p.label] || "";
    const bar = document.createElement("div");
    bar.className = "bar";
    const fill = document.createElement("span");
    fill.style.width = Math.max(0, Math.min(100, p.score * 100)).toFixed(1) + "%";
    bar.appendChild(fill);
    const score = document.createElement("span");
    score.className = "score";
    score.textContent = (p.score * 100).toFixed(1) + " %";
    row.append(label, bar, score);
    box.appendChild(row);
  }
  box.appendChild(reviewBox(rv, preds));
  page.appendChild(box);
  return page;
}

// rows are the pages classified by the last submission, one per page (a
// file that failed is one row with its error): what the table shows and the
// downloads hold.
let rows = [];

// cards are the classified pages' cards (a failed file has none), shown
// cardsPerView at a time: a batch of hundreds of pages keeps a short page.
// cardView is the view shown (0: the first cardsPerView cards), selected the
// card of the row clicked last (-1: none).
const cardsPerView = 20;
let cards = [];
let cardView = 0;
let selected = -1;

// views is the number of views the cards take (at least one).
function views() {
  return Math.max(1, Math.ceil(cards.length / cardsPerView));
}

// showNav shows the navigation between views (hidden while one view
// holds every card) with the range of cards shown.
function showNav() {
  const first = cardView * cardsPerView;
  const last = Math.min(cards.length, first + cardsPerView);
  $("cards-nav").hidden = views() < 2;
  $("cards-range").textContent = "Cards " + (first + 1) + "–" + last + " of " + cards.length;
  $("cards-prev").disabled = cardView === 0;
  $("cards-next").disabled = cardView === views() - 1;
}

// cardAt is the element of card i.
function cardAt(i) {
  const el = cardElement(cards[i]);
  el.dataset.card = i;
  if (i === selected) el.classList.add("selected");
  return el;
}

// showCards shows the cards of view v (clamped to the views there are).
function showCards(v) {
  cardView = Math.max(0, Math.min(v, views() - 1));
  const first = cardView * cardsPerView;
  const shown = [];
  for (let i = first; i < Math.min(cards.length, first + cardsPerView); i++) shown.push(cardAt(i));
  $("results").replaceChildren(...shown);
  showNav();
}

// addCard keeps a page's card, shows it when it falls in the view shown,
// and returns its index.
function addCard(card) {
  cards.push(card);
  const i = cards.length - 1;
  if (Math.floor(i / cardsPerView) === cardView) $("results").appendChild(cardAt(i));
  showNav();
  return i;
}

// selectCard shows card i in its view, marks it and its table row, and
// scrolls to it.
function selectCard(i) {
  selected = i;
  for (const tr of $("table").tBodies[0].rows) tr.classList.toggle("selected", Number(tr.dataset.card) === i);
  showCards(Math.floor(i / cardsPerView));
  const el = $("results").querySelector('[data-card="' + i + '"]');
  if (el) el.scrollIntoView({ block: "nearest" });
}

$("cards-prev").addEventListener("click", () => showCards(cardView - 1));
$("cards-next").addEventListener("click", () => showCards(cardView + 1));
// A click on a page's row of the table shows its card.
$("table").tBodies[0].addEventListener("click", (ev) => {
  const tr = ev.target.closest("tr");
  if (tr && tr.dataset.card !== undefined) selectCard(Number(tr.dataset.card));
});
$("table").tBodies[0].addEventListener("keydown", (ev) => {
  const tr = ev.target.closest("tr");
  if (!tr || tr.dataset.card === undefined || (ev.key !== "Enter" && ev.key !== " ")) return;
  ev.preventDefault();
  selectCard(Number(tr.dataset.card));
});

// pageName is a page's number with its PDF page label ("5 (label iv)"),
// or the number alone when the page has no label or its label is the
// number itself.
function pageName(page, label) {
  return label && label !== String(page) ? page + " (label " + label + ")" : String(page);
}

// addRow records one page (or one failed file) and shows it in the table,
// the page's number with its label (page_label: the PDF's own, or empty);
// card is the index of the page's card (none for a failed file).
function addRow(row, card) {
  rows.push(row);
  const tr = $("table").tBodies[0].insertRow();
  if (card !== undefined) {
    tr.dataset.card = card;
    tr.title = "Show this page's card";
    tr.tabIndex = 0; // reached with Tab; Enter or Space shows the card
  }
  tr.insertCell().textContent = row.file;
  tr.insertCell().textContent = row.page === "" ? "" : pageName(row.page, row.page_label);
  const cat = tr.insertCell();
  cat.textContent = row.category;
  cat.title = descriptions[row.category] || "";
  tr.insertCell().textContent = row.score === "" ? "" : (row.score * 100).toFixed(1) + " %";
  tr.insertCell().textContent = row.second;
  const rv = tr.insertCell();
  rv.textContent = row.error ? "Failed: " + row.error : row.review;
  if (row.error) tr.classList.add("failed");
  else if (row.skipped) tr.classList.add("skipped");
  else if (row.needs_review === true) tr.classList.add("check");
}

// pageRow is the row of one classified page (label: its PDF page label,
// or empty when the document has none).
function pageRow(file, page, label, preds, rv) {
  return {
    file, page,
    category: preds.length ? preds[0].label : "", score: preds.length ? preds[0].score : "",
    second: preds.length > 1 ? preds[1].label : "",
    needs_review: rv ? rv.needs_review : null, review: reviewText(rv, preds),
    predictions: preds, error: "", page_label: label || "",
  };
}

// csvCell quotes a CSV field when it must (RFC 4180). The download is
// for spreadsheets: a cell that would start with = + - @ (or a tab or a
// carriage return) gets a leading apostrophe, so a file named
// "=HYPERLINK(...).png" (another client's, listed on a shared service) is
// shown as text, not run as a formula.
function csvCell(v) {
  let s = v === null || v === undefined ? "" : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

// offerDownloads points the download links at the rows as CSV and JSON.
// For a job that has not ended, partial is what it has done ({ id, state,
// done: the files whose rows are here, total: its files, items: its
// counts }): the files are named so ("pageclass-results-partial-120-of-2000.csv"),
// the CSV keeps its columns, and the JSON is an object with the job's
// state and counts around the rows. Without partial, the complete ones.
function offerDownloads(partial) {
  // page_label last: readers of the earlier eight columns keep working.
  const head = ["file", "page", "category", "score", "second_choice", "needs_review", "review", "error", "page_label"];
  const lines = [head.join(",")];
  for (const r of rows) {
    const nr = r.needs_review === true ? "yes" : r.needs_review === false ? "no" : "";
    lines.push([r.file, r.page, r.category, r.score === "" ? "" : r.score.toFixed(4), r.second, nr, r.review, r.error, r.page_label].map(csvCell).join(","));
  }
  const json = partial
    ? { partial: true, job: partial.id, state: partial.state, files_done: partial.done, files_total: partial.total, items: partial.items, rows }
    : rows;
  const name = partial ? "pageclass-results-partial-" + partial.done + "-of-" + partial.total : "pageclass-results";
  for (const [id, body, type, ext] of [["download-csv", lines.join("\r\n") + "\r\n", "text/csv", ".csv"],
    ["download-json", JSON.stringify(json, null, 2) + "\n", "application/json", ".json"]]) {
    const a = $(id);
    if (a.href) URL.revokeObjectURL(a.href);
    a.href = URL.createObjectURL(new Blob([body], { type }));
    a.download = name + ext;
  }
  $("downloads-what").textContent = partial
    ? "Download the pages done so far (partial: " + partial.done + " of " + partial.total + " file(s); the job is " + partial.state + "):"
    : "Download what was classified:";
  $("downloads").classList.toggle("partial", Boolean(partial));
  $("downloads").hidden = false;
}

// documentKind says, from a file's first bytes (a Uint8Array), whether it
// is a document of pages for /predict_document: "pdf" (%PDF-), "tiff"
// (II*\0 or MM\0*, possibly several pages), or "" for a page image for
// /predict_image. By content, as the service and the command line go,
// whatever the file's name or the type the browser guessed.
function documentKind(head) {
  const starts = (sig) => sig.length <= head.length && [...sig].every((c, i) => head[i] === c.charCodeAt(0));
  if (starts("%PDF-")) return "pdf";
  if (starts("II*\0") || starts("MM\0*")) return "tiff";
  return "";
}

// kindOf is documentKind of a file (a File or Blob).
async function kindOf(file) {
  return documentKind(new Uint8Array(await file.slice(0, 5).arrayBuffer()));
}

// The Pages field is shown while a chosen file is a PDF or a TIFF, or a
// book's address is given: it goes to /predict_document (and selects a
// book's pages), images ignore it.
async function showPagesField() {
  const files = [...$("file").files];
  const kinds = await Promise.all(files.map(kindOf));
  // A later choice may have answered first: only the current one counts.
  if (files.length !== $("file").files.length || files.some((f, i) => f !== $("file").files[i])) return;
  $("pages-field").hidden = !kinds.some((k) => k !== "") && !$("book").value.trim();
}
$("file").addEventListener("change", showPagesField);
$("book").addEventListener("input", showPagesField);

// addFields adds the form's fields to fd: the model, the Top-N, and, when
// a file is a PDF or a TIFF (documents), thumbnails and the Pages field (a
// malformed selection is the service's to refuse: 422, shown as any
// validation error); thumbnails also when kept (a job's answers, kept by
// the service, then carry every page's thumbnail for a later visit).
function addFields(fd, documents, kept = false) {
  fd.append("version", $("version").value);
  fd.append("topn", $("topn").value);
  if (kept || documents) fd.append("thumbnails", "true");
  if (!documents) return;
  const pages = $("pages").value.trim();
  if (pages) fd.append("pages", pages);
}

// addFile adds a file to fd as the service takes it: a PDF labelled
// application/pdf, whatever the browser guessed from its name; any other
// file (a TIFF told by its content) as it is.
function addFile(fd, file, kind) {
  fd.append("file", kind === "pdf" ? new Blob([file], { type: "application/pdf" }) : file, file.name);
}

// This page's words for errors a person meets (common.js's errorWords).
errorWords[413] = () => "the file is larger than this service takes (" + $("max-mb").textContent + " MB a file).";
errorWords[415] = (detail) => "this is not a page image, a PDF or a TIFF. (The service said: " + detail + ")";

// classify sends one file to the service and returns its answer, or throws
// an Error with the API's detail: a PDF or a TIFF to /predict_document
// (the pages of the Pages field, every page when it is empty, with
// thumbnails), anything else to /predict_image (without the Pages field,
// which it refuses).
async function classify(file) {
  const kind = await kindOf(file);
  const fd = new FormData();
  addFile(fd, file, kind);
  addFields(fd, kind !== "");
  return answerOf(await api(kind ? "/predict_document" : "/predict_image", { method: "POST", body: fd }));
}

// tally counts what the current submission showed, for the status line.
let tally;

// reset empties the table, the cards, the notices and the tally.
function reset() {
  $("error").hidden = true;
  $("demo").hidden = true;
  $("batch").hidden = true;
  $("downloads").hidden = true;
  $("downloads").classList.remove("partial");
  $("table").tBodies[0].replaceChildren();
  rows = [];
  cards = [];
  selected = -1;
  showCards(0);
  tally = { pages: 0, flagged: 0, failures: [], skipped: 0, demo: new Set(), model: "", single: "" };
}

// showAnswer adds the pages of one file's answer to the table and the
// cards; image is the thumbnail of a page image (an object URL of the file,
// or what pictureOf takes when the file is not at hand), multi whether the
// batch has several files.
function showAnswer(fileName, body, image, multi) {
  tally.model = body.version === "all" ? "ensemble" : "model " + body.version;
  // The service answered with its shipped demo models (the published
  // models are not installed): say so on the page, as the answer does.
  if (body.demo) for (const m of body.demo_models || []) tally.demo.add(m);
  // A page image's card shows the file itself when this tab has it (an
  // object URL), else the answer's own thumbnail (thumbnails=true: a book
  // job's page, or a job's page image sent beside documents), else what
  // pictureOf takes (the service's thumbnail of the page).
  const picture = typeof image === "string" ? image : body.thumbnail || image;
  const answered = body.type === "document"
    ? body.pages.map((p) => [p.page, p.label, p.thumbnail, p.predictions, p.review])
    : [[1, "", picture, body.predictions, body.review]];
  for (const [page, label, thumb, preds, rv] of answered) {
    const name = pageName(page, label);
    const title = body.type === "document" ? (multi ? fileName + ", page " + name : "Page " + name) : fileName;
    addRow(pageRow(fileName, page, label, preds, rv), addCard({ title, thumb, preds, rv }));
    tally.pages++;
    if (rv && rv.needs_review === true) tally.flagged++;
  }
  // A selection (the Pages field) classifies some of the pages.
  const count = body.type !== "document" ? ""
    : body.pages.length === body.page_count ? body.page_count + " page(s), "
    : body.pages.length + " of " + body.page_count + " page(s), ";
  tally.single = fileName + ": " + count + tally.model;
}

// showFailure adds a file that failed: a row with its error.
function showFailure(fileName, message, multi) {
  tally.failures.push((multi ? fileName + ": " : "") + message);
  addRow({ file: fileName, page: "", category: "", score: "", second: "", needs_review: null, review: "", predictions: [], error: message, page_label: "" });
}

// showSkipped adds a book's page that a job skipped (it had nothing to
// classify: no image file): a row that says so and why, not a failure.
function showSkipped(fileName, reason) {
  tally.skipped++;
  addRow({ file: fileName, page: "", category: "", score: "", second: "", needs_review: null, review: "Skipped: " + reason, predictions: [], error: "", page_label: "", skipped: reason });
}

// finish says what the batch of n files gave (prefix: before the status
// line), the demo notice and the errors, and offers the downloads.
function finish(n, prefix) {
  if (n > 1) {
    $("status").textContent = prefix + n + " files: " + tally.pages + " page(s) classified, " + tally.flagged + " to check, " +
      tally.failures.length + " file(s) failed" + (tally.skipped ? ", " + tally.skipped + " skipped" : "") + (tally.model ? ", " + tally.model : "");
  } else {
    $("status").textContent = tally.failures.length ? "" : prefix + tally.single;
  }
  if (tally.demo.size) {
    $("demo").textContent = "Demo models answered (" + [...tally.demo].join(", ") +
      "): trained on the sample pages only, not the published models. Use the scores as an illustration.";
    $("demo").hidden = false;
  }
  if (tally.failures.length) showError(tally.failures.join("\n"));
  if (rows.length) {
    offerDownloads(null);
    $("batch").hidden = false;
  }
}

// unsaved is set while the page classifies in requests of its own (not a
// job, whose results stay with the service): leaving or reloading the page
// then loses them, so the browser asks first.
let unsaved = false;
window.addEventListener("beforeunload", (ev) => {
  if (!unsaved) return;
  ev.preventDefault();
  ev.returnValue = ""; // older browsers show their question only with it
});

// stopAsked is set by Stop while the page sends its files one by one: the
// file being classified ends, the others are not sent.
let stopAsked = false;

// classifyEach sends the files one after the other (a service without
// jobs, or a batch too large for one request), showing each answer.
async function classifyEach(files) {
  unsaved = true;
  stopAsked = false;
  $("stop").hidden = false;
  try {
    await classifyFiles(files);
  } finally {
    unsaved = false;
    $("stop").hidden = true;
  }
}

// Stop ends the batch in progress: the page's own (the files not yet sent
// are not classified, and listed so), or the job followed, which the
// service cancels (DELETE /jobs/{id}: its pages done so far are kept).
$("stop").addEventListener("click", async () => {
  $("stop").disabled = true;
  try {
    const m = /^#job=(.+)$/.exec(location.hash);
    if (m) {
      await answerOf(await api("/jobs/" + m[1], { method: "DELETE" }));
    } else {
      stopAsked = true;
    }
  } catch (e) {
    showError("Stop failed: " + e.message);
  } finally {
    $("stop").disabled = false;
  }
});

async function classifyFiles(files) {
  const multi = files.length > 1;
  for (const [i, file] of files.entries()) {
    if (stopAsked) {
      showSkipped(file.name, "stopped before it was sent");
      continue;
    }
    $("status").textContent = "Classifying " + file.name + (multi ? " (" + (i + 1) + " of " + files.length + ")" : "") + "…" +
      (multi ? " Keep this page open until the end: the results are kept only here." : "");
    let body;
    try {
      body = await classify(file);
    } catch (e) {
      showFailure(file.name, e.message, multi);
      continue;
    }
    showAnswer(file.name, body, URL.createObjectURL(file), multi);
  }
  finish(files.length, "");
}

// jobsEnabled says whether the service takes jobs (POST /jobs is among the
// endpoints of /info: JOBS_DIR or JOBS_DATABASE_URL is set). Then a batch
// goes as one job, whose results stay with the service.
let jobsEnabled = false;

// following counts the jobs followed: a follower whose number is no longer
// the last stops (another submission or job took the page).
let following = 0;

// recentKey is where this browser keeps its recent jobs (localStorage): the
// jobs it sent or opened, newest first, at most recentMax, each its id, the
// service's submit time (created_at), its file count (items) and what it
// is of (jobWhat). lastJobKey
// is where it kept its last job's id before: taken into the list.
const recentKey = "archivekit-pageclass-recent-jobs";
const recentMax = 10;
const lastJobKey = "archivekit-pageclass-last-job";

// recentJobs reads the recent jobs.
function recentJobs() {
  let list = [];
  try { list = JSON.parse(localStorage.getItem(recentKey) || "[]"); } catch (_) { /* not a list */ }
  if (!Array.isArray(list)) list = [];
  list = list.filter((j) => j && typeof j.id === "string");
  const last = localStorage.getItem(lastJobKey);
  if (last) {
    if (!list.some((j) => j.id === last)) list.push({ id: last, submitted: "", files: null });
    saveRecent(list);
    localStorage.removeItem(lastJobKey);
  }
  return list;
}

// saveRecent keeps list's first recentMax jobs.
function saveRecent(list) {
  localStorage.setItem(recentKey, JSON.stringify(list.slice(0, recentMax)));
}

// noteJob keeps the job of status st among the recent jobs: first when it
// is new, in its place with its file count brought up to date (a book job
// has its items once its book is read) when it is there.
function noteJob(st) {
  const list = recentJobs();
  const known = list.find((j) => j.id === st.id);
  if (known) Object.assign(known, { submitted: st.created_at, files: st.items.total, what: jobWhat(st) });
  else list.unshift({ id: st.id, submitted: st.created_at, files: st.items.total, what: jobWhat(st) });
  saveRecent(list);
}

// forgetJob drops job id from the recent jobs.
function forgetJob(id) {
  saveRecent(recentJobs().filter((j) => j.id !== id));
}

// jobWhat says what the job of status st is of, by which a person tells
// jobs apart: its book's address, else its first file's name ("" while
// it has none).
function jobWhat(st) {
  if (st.book) return "book " + st.book;
  return st.first_item ? "first " + st.first_item : "";
}

// jobEntry is a list entry of job id: a link to its address, its submit
// time, what it is of (jobWhat) and file count, and a place for its state.
function jobEntry(id, submitted, files, what) {
  const li = document.createElement("li");
  const a = document.createElement("a");
  a.href = "#job=" + encodeURIComponent(id);
  a.textContent = "job " + id;
  const about = [submitted ? "sent " + new Date(submitted).toLocaleString() : "", what || "",
    typeof files === "number" ? files + " file(s)" : ""].filter(Boolean).join(", ");
  const state = document.createElement("span");
  state.className = "state";
  li.append(a, about ? ": " + about : "", " ", state);
  return [li, state];
}

// showRecent lists the recent jobs, each a link to its address with its
// submit time and file count, then asks the service for each one's state,
// one after the other: a job the service no longer has (404 job_not_found:
// removed by JOBS_RETENTION) is shown gone and dropped from the list. Then
// the service's own latest jobs that this browser does not list follow
// (showServiceJobs).
async function showRecent() {
  const me = following;
  const list = recentJobs();
  $("recent-jobs").hidden = list.length === 0;
  const items = list.map((j) => [j.id, ...jobEntry(j.id, j.submitted, j.files, j.what)]);
  $("recent-list").replaceChildren(...items.map(([, li]) => li));
  for (const [id, li, state] of items) {
    try {
      state.textContent = "(" + (await answerOf(await api("/jobs/" + encodeURIComponent(id)))).state + ")";
    } catch (e) {
      if (e.reason !== "job_not_found") continue;
      li.classList.add("gone");
      li.replaceChildren("job " + id + ": gone (the service no longer has it)");
      forgetJob(id);
    }
  }
  await showServiceJobs(new Set(list.map((j) => j.id)), me);
}

// showServiceJobs lists the service's latest recentMax jobs (GET /jobs:
// with API_TOKENS_FILE the client's own, else every job) that are not in
// known, this browser's list: a batch sent from another browser or by a
// program is found there too. With a search (jobFind: a state, a text of
// an item's name or a book's address, the days sent), the service's jobs
// that match, this browser's among them. "Older jobs" (#service-more) adds the next
// recentMax, as long as the service has more (its next link). Nothing is
// shown when the service takes no jobs, wants a token this tab has not
// been given (it is not asked for here), or a job was opened meanwhile
// (me is no longer the last follower).
async function showServiceJobs(known, me) {
  await infoReady;
  if (!jobsEnabled) return;
  $("service-list").replaceChildren();
  $("service-more").hidden = true;
  $("service-none").hidden = true;
  if (searching()) known = new Set(); // a search finds this browser's jobs too
  let url = "/jobs?limit=" + recentMax;
  if (jobFind.state) url += "&state=" + encodeURIComponent(jobFind.state);
  if (jobFind.name) url += "&name=" + encodeURIComponent(jobFind.name);
  if (jobFind.since) url += "&since=" + encodeURIComponent(jobFind.since);
  if (jobFind.until) url += "&until=" + encodeURIComponent(jobFind.until);
  $("service-intro").textContent = searching()
    ? "Jobs on this service that match, newest first (with per-client tokens, those of your token only):"
    : "Other jobs on this service, newest first (sent from another browser or by a program; with per-client tokens, those of your token only):";
  await addServiceJobs(url, known, me);
}

// jobFind is the search of the service's jobs (#job-find): a state, a
// text, and the submit times' bounds (RFC 3339: from the start of the
// "from" day, to the end of the "to" day, in this browser's time zone),
// each "" for any.
let jobFind = { state: "", name: "", since: "", until: "" };
const searching = () => jobFind.state || jobFind.name || jobFind.since || jobFind.until;

// dayStart is the start of the day (YYYY-MM-DD) after days more days, in
// this browser's time zone, in RFC 3339; "" for no day.
function dayStart(day, days) {
  if (!day) return "";
  const d = new Date(day + "T00:00:00");
  d.setDate(d.getDate() + days);
  return d.toISOString();
}

$("job-find").addEventListener("submit", (e) => {
  e.preventDefault();
  jobFind = { state: $("find-state").value, name: $("find-name").value.trim(),
    since: dayStart($("find-from").value, 0), until: dayStart($("find-to").value, 1) };
  showServiceJobs(new Set(recentJobs().map((j) => j.id)), following);
});

// addServiceJobs adds the jobs of the page of GET /jobs at url that are
// not in known to the service's list, and offers the next page. The list
// is shown once the service has any job, or a search is made, with the
// search form; a search with no match says so, and so does one the
// service refuses (its detail).
async function addServiceJobs(url, known, me) {
  let page;
  try {
    const r = await api(url, {}, false);
    if (!r.ok) {
      if (searching() && me === following) {
        $("service-none").textContent = "The service refused the search: " + detailText(await r.json().catch(() => null), r.status);
        $("service-none").hidden = false;
      }
      return;
    }
    page = await r.json();
  } catch (_) {
    return; // the service did not answer: the page works without the list
  }
  if (me !== following) return;
  const jobs = page.jobs || [];
  const others = jobs.filter((st) => st && typeof st.id === "string" && !known.has(st.id));
  $("service-list").append(...others.map((st) => {
    known.add(st.id);
    const [li, state] = jobEntry(st.id, st.created_at, st.items ? st.items.total : null, jobWhat(st));
    state.textContent = "(" + st.state + ")";
    return li;
  }));
  const more = $("service-more");
  // next is the service's link: under its ROOT_PATH when it has one.
  more.hidden = !(typeof page.next === "string" && page.next.startsWith(rootPath + "/jobs?"));
  more.onclick = () => { more.hidden = true; addServiceJobs(page.next, known, following); };
  const empty = $("service-list").children.length === 0 && more.hidden;
  $("service-none").textContent = searching() ? "No job on this service matches." : "None beyond the jobs above.";
  $("service-none").hidden = !empty;
  if (!$("service-jobs").hidden) return;
  $("service-jobs").hidden = jobs.length === 0 && !searching();
}

// submitJob sends the files as one job and returns its id and, by item,
// the page images among the files (null for a PDF or a TIFF, which the
// service gives thumbnails of), or no id when the batch is too large for
// one request (413: the files then go one by one).
async function submitJob(files) {
  const kinds = await Promise.all(files.map(kindOf));
  const fd = new FormData();
  addFields(fd, kinds.some((k) => k !== ""), true);
  files.forEach((f, i) => addFile(fd, f, kinds[i]));
  const r = await api("/jobs", { method: "POST", body: fd });
  if (r.status === 413) return ["", []];
  return [(await answerOf(r)).id, files.map((f, i) => (kinds[i] ? null : f))];
}

// jobEnded says whether a job's state is final.
const jobEnded = (state) => state === "succeeded" || state === "failed" || state === "canceled";

// imageOf is the thumbnail of item i of job, a page image, for its card
// (job: its url, local: the page images sent from this tab, by item, and
// sources: a book job's pages' URLs, by item): the file sent, else the
// service's thumbnail (GET /jobs/{id}/results/{item}/thumbnail) of the file
// the job keeps or, for a book's page, of the page's image, which the
// service fetches again (with a link to that image should it fail).
function imageOf(job, i) {
  if (job.local[i]) return URL.createObjectURL(job.local[i]);
  const src = (job.book && job.sources[i]) || "";
  return { fetch: job.url + "/results/" + i + "/thumbnail", link: /^https?:\/\//.test(src) ? src : "" };
}

// showItem shows one item of a job in the table and the cards (it: the
// item as GET /jobs/{id}/results lists it: name, state, status, output, error,
// a skipped item's reason;
// job: what imageOf reads; multi: whether the job has several items; state:
// the job's, for an item that never ran).
function showItem(it, job, multi, state) {
  if (it.state === "succeeded") {
    showAnswer(it.name, it.output, imageOf(job, it.item), multi);
  } else if (it.state === "failed") {
    showFailure(it.name, "Error " + it.status + ": " + (it.output ? detailText(it.output, it.status) : it.error), multi);
  } else if (it.state === "skipped") {
    showSkipped(it.name, it.reason);
  } else {
    showFailure(it.name, "not classified: the job was " + state, multi);
  }
  $("batch").hidden = false; // the rows so far (the downloads: offerJobSoFar)
}

// offerJobSoFar offers the downloads of the rows of a job that has not
// ended (st: its status; done: its files shown, of total), partial and
// named so; once it ends, finish offers the complete ones.
function offerJobSoFar(st, done, total) {
  if (!rows.length) return;
  offerDownloads({ id: st.id, state: st.state, done, total, items: st.items });
}

// itemResult reads item i of the job at url, which its status st counts
// as done, from GET /jobs/{id}/results/{i} (the item's answer with its
// status), as GET /jobs/{id}/results lists it (a failed item's error from
// st.errors); null when the item has not run yet (409). A skipped item,
// which has no answer, is read from st.skipped, with its reason.
async function itemResult(url, i, name, st) {
  const skipped = (st.skipped || []).find((s) => s.item === i);
  if (skipped) return { item: i, name, state: "skipped", reason: skipped.reason };
  const r = await api(url + "/results/" + i);
  if (r.status === 409) return null;
  const failed = st.errors.find((e) => e.item === i);
  if (!r.ok && !failed) await answerOf(r); // the service's own error (the job is gone): throws
  let output = null;
  if ((r.headers.get("Content-Type") || "").includes("json")) {
    try { output = await r.json(); } catch (_) { /* not JSON */ }
  }
  return { item: i, name, state: r.ok ? "succeeded" : "failed", status: r.status, output, error: failed ? failed.error : "" };
}

// followJob shows job id's progress until it ends, and its items' pages
// as they are classified, in item order (local: the page images sent, by
// item, for their thumbnails; none when the page was opened again). Each
// poll reads the job's status and the answers of the items done since the
// last one, each item once: GET /jobs/{id}/results (every item's name and
// the answers so far) only when the job has items the page does not know
// yet (at its first poll, or once a book job has read its book). The job's
// id is in the address (#job=...) and kept in this browser, so the page can
// be closed and opened again.
async function followJob(id, local = []) {
  const me = ++following;
  history.replaceState(null, "", "#job=" + encodeURIComponent(id));
  $("recent-jobs").hidden = true;
  $("service-jobs").hidden = true;
  const url = "/jobs/" + encodeURIComponent(id);
  // names are the job's items' names; shown counts the items shown, the
  // first ones.
  let names = [];
  let shown = 0;
  let st;
  // job is what imageOf reads; offered the files and state the downloads
  // so far were made of.
  const job = { url, local, book: false, sources: [] };
  let offered = "";
  for (;;) {
    try {
      st = await answerOf(await api(url));
    } catch (e) {
      if (e.reason === "job_not_found") forgetJob(id);
      throw e;
    }
    if (me !== following) return;
    noteJob(st);
    $("stop").hidden = jobEnded(st.state); // Stop cancels the job
    if (st.items.total > names.length) {
      const res = await answerOf(await api(url + "/results"));
      if (me !== following) return;
      names = res.items.map((it) => it.name);
      job.book = Boolean(res.book);
      job.sources = res.items.map((it) => (it.book && it.book.source) || "");
      for (; shown < res.items.length && res.items[shown].state !== "queued"; shown++) {
        showItem(res.items[shown], job, names.length > 1, st.state);
      }
    }
    const done = st.items.succeeded + st.items.failed + (st.items.skipped || 0);
    while (shown < Math.min(done, names.length)) {
      const it = await itemResult(url, shown, names[shown], st);
      if (me !== following) return;
      if (!it) break;
      showItem(it, job, names.length > 1, st.state);
      shown++;
    }
    if (jobEnded(st.state)) break;
    if (offered !== shown + " " + st.state) {
      offerJobSoFar(st, shown, names.length);
      offered = shown + " " + st.state;
    }
    // Without the job's id (in the address): a screen reader read its 32
    // characters at each change.
    $("status").textContent = "Job " + st.state + ": " + done + " of " + st.items.total + " file(s) done" +
      (st.items.failed ? ", " + st.items.failed + " failed" : "") +
      (st.items.skipped ? ", " + st.items.skipped + " skipped" : "") +
      "… The results stay with the service: this page can be closed and opened again at this address.";
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (me !== following) return;
  }
  // Items done out of order (none so far: a job runs its items one after
  // the other) are read from the results; the others never ran.
  let rest = [];
  if (st.items.succeeded + st.items.failed + (st.items.skipped || 0) > shown) {
    rest = (await answerOf(await api(url + "/results"))).items;
    if (me !== following) return;
  }
  for (; shown < names.length; shown++) {
    showItem(rest[shown] || { item: shown, name: names[shown], state: "queued" }, job, names.length > 1, st.state);
  }
  $("stop").hidden = true;
  finish(names.length, "Job " + id + " " + st.state + ": ");
  if (st.error) showError(st.error);
}

// run does the work of a submission (the submit button disabled meanwhile)
// or of a job opened again (the button left as it is), and shows its error.
async function run(work, submission) {
  if (submission) {
    $("submit").disabled = true;
    newAttempt();
  }
  try {
    if (submission && infoLocked) {
      // A service that wants a token: asked for now, once, so that the
      // page knows whether it takes jobs before it sends the batch (the
      // first batch went file by file).
      const r = await api("/info");
      if (r.ok) {
        infoLocked = false;
        showInfo(noteInfo(await r.json()));
      }
    }
    await work();
  } catch (e) {
    $("status").textContent = "";
    showError("The request failed: " + e.message);
  } finally {
    if (submission) {
      $("submit").disabled = false;
      // The focus was on the disabled button, and was left on the body.
      if (!document.activeElement || document.activeElement === document.body) $("submit").focus();
    }
  }
}

// bookFields are the form's fields for the book at url: the model, the
// Top-N, the Pages field and thumbnails (the service keeps no copy of a
// book's pages: its answers carry their thumbnails).
function bookFields(url) {
  const fd = new FormData();
  addFields(fd, true);
  fd.append("book", url);
  return fd;
}

// classifyBook classifies the book at url: as one job (each page an item,
// its thumbnail in its answer) when the service takes jobs, else in one
// request to /predict_document, whose answer has every page.
async function classifyBook(url) {
  if (jobsEnabled) {
    $("status").textContent = "Sending the book as one job…";
    const st = await answerOf(await api("/jobs", { method: "POST", body: bookFields(url) }));
    return followJob(st.id);
  }
  history.replaceState(null, "", location.pathname + location.search);
  const name = url.replace(/[?#].*$/, "").replace(/\/+$/, "").split("/").pop() || "book";
  $("status").textContent = "Classifying the book " + name + "… (its pages are fetched by the service)";
  let body;
  try {
    body = await answerOf(await api("/predict_document", { method: "POST", body: bookFields(url) }));
  } catch (e) {
    showFailure(name, e.message, false);
    finish(1, "");
    return;
  }
  showAnswer(name, body, null, false);
  for (const s of body.skipped || []) showFailure(name, "page " + s.page + " not classified: " + s.error, true);
  finish(1, "");
}

// A field the browser refuses (its own message shown, as for a Top-N of
// 99) hides an error of an earlier attempt, which no longer says what is
// wrong.
$("form").addEventListener("invalid", () => { $("error").hidden = true; }, true);

$("form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  reset();
  const files = [...$("file").files];
  const book = $("book").value.trim();
  if (files.length && book) { showError("Choose files or give a book's address, not both."); return; }
  if (book) {
    return run(() => {
      following++; // a job followed until now no longer shows here
      return classifyBook(book);
    }, true);
  }
  if (!files.length) { showError("Choose an image, a PDF or a TIFF, or give a book's address, first."); return; }
  return run(async () => {
    following++; // a job followed until now no longer shows here
    if (jobsEnabled) {
      $("status").textContent = "Sending " + files.length + " file(s) as one job…";
      const [id, images] = await submitJob(files);
      if (id) return followJob(id, images);
    }
    history.replaceState(null, "", location.pathname + location.search);
    return classifyEach(files);
  }, true);
});

// openJob shows the job named by the address (#job=<id>), if any; without
// one, the recent jobs of this browser are offered as links.
function openJob() {
  const m = /^#job=(.+)$/.exec(location.hash);
  if (m) {
    const id = decodeURIComponent(m[1]);
    reset();
    $("status").textContent = "Opening job " + id + "…";
    run(() => followJob(id), false);
    return;
  }
  showRecent();
}
window.addEventListener("hashchange", openJob);
openJob();
