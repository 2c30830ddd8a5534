// Browser interface of pageclass-api. Talks to the service it was served by.
"use strict";
const $ = (id) => document.getElementById(id);

// Fill the model list from /info.
fetch("/info").then((r) => r.json()).then((info) => {
  const sel = $("version");
  for (const v of info.available_models || []) {
    if (v === "all") continue;
    const o = document.createElement("option");
    o.value = v;
    o.textContent = "model " + v;
    sel.appendChild(o);
  }
  $("topn").max = (info.categories || []).length || 11;
}).catch(() => showError("The service did not answer /info."));

// detailText turns an error body into a sentence: detail is a string for
// the service's own errors and a list for validation errors.
function detailText(body, status) {
  if (body && typeof body.detail === "string") return body.detail;
  if (body && Array.isArray(body.detail)) {
    return body.detail.map((e) => (e.loc || []).slice(1).join(".") + ": " + e.msg).join("\n");
  }
  return "The service answered " + status + ".";
}

function showError(text) {
  const e = $("error");
  e.textContent = text;
  e.hidden = false;
}

// reviewBox shows a page's review: whether to check it and why, the
// models' agreement, the margin, the entropy and the page-condition evidence.
function reviewBox(rv) {
  const box = document.createElement("div");
  box.className = "review";
  if (!rv) return box;
  const flag = document.createElement("div");
  flag.className = "flag " + (rv.needs_review === true ? "check" : rv.needs_review === false ? "ok" : "unknown");
  const reasons = (rv.reasons || []).join(", ");
  flag.textContent = rv.needs_review === true ? "Needs review: " + reasons
    : rv.needs_review === false ? "No review needed"
    : "Review unknown: no calibration for these models";
  box.appendChild(flag);
  const facts = document.createElement("div");
  facts.className = "facts";
  const parts = [
    "agreement " + rv.agreement + "/" + rv.models,
    "margin " + rv.margin.toFixed(3),
    "entropy " + rv.entropy.toFixed(3),
  ];
  if (rv.ink) parts.push("ink " + (rv.ink.coverage * 100).toFixed(2) + " %" + (rv.ink.near_blank ? " (near-blank)" : ""));
  if (rv.rotation) parts.push("turn " + rv.rotation.angle + "°" + (rv.rotation.rotated ? " (probably rotated)" : ""));
  parts.push("calibration " + rv.calibration);
  facts.textContent = parts.join(" · ");
  box.appendChild(facts);
  return box;
}

function renderPage(title, thumb, preds, rv) {
  const page = document.createElement("div");
  page.className = "page";
  if (thumb) {
    const img = document.createElement("img");
    img.src = thumb;
    img.alt = title;
    page.appendChild(img);
  }
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
  box.appendChild(reviewBox(rv));
  page.appendChild(box);
  $("results").appendChild(page);
}

$("form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("error").hidden = true;
  $("demo").hidden = true;
  $("results").replaceChildren();
  const file = $("file").files[0];
  if (!file) { showError("Choose an image or a PDF first."); return; }
  const isPDF = file.type === "application/pdf" || /\.pdf$/i.test(file.name);
  const fd = new FormData();
  fd.append("file", file, file.name);
  fd.append("version", $("version").value);
  fd.append("topn", $("topn").value);
  if (isPDF) fd.append("thumbnails", "true");
  $("status").textContent = "Classifying " + file.name + "…";
  $("submit").disabled = true;
  try {
    const r = await fetch(isPDF ? "/predict_document" : "/predict_image", { method: "POST", body: fd });
    let body = null;
    try { body = await r.json(); } catch (_) { /* not JSON */ }
    if (!r.ok) {
      $("status").textContent = "";
      showError("Error " + r.status + ": " + detailText(body, r.status));
      return;
    }
    const model = body.version === "all" ? "ensemble" : "model " + body.version;
    if (body.demo) {
      // The service answered with its shipped demo models (the published
      // models are not installed): say so on the page, as the answer does.
      $("demo").textContent = "Demo models answered (" + (body.demo_models || []).join(", ") +
        "): trained on the sample pages only, not the published models. Use the scores as an illustration.";
      $("demo").hidden = false;
    }
    if (body.type === "document") {
      $("status").textContent = file.name + ": " + body.page_count + " page(s), " + model;
      for (const p of body.pages) renderPage("Page " + p.page, p.thumbnail, p.predictions, p.review);
    } else {
      $("status").textContent = file.name + ": " + model;
      renderPage(file.name, URL.createObjectURL(file), body.predictions, body.review);
    }
  } catch (e) {
    $("status").textContent = "";
    showError("The request failed: " + e.message);
  } finally {
    $("submit").disabled = false;
  }
});
