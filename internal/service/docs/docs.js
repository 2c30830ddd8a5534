// A small OpenAPI 3.1 renderer for the archivekit services: lists every
// operation with its parameters, request body and responses, and lets the
// reader send a request from the page. No third-party code, no network
// access beyond the service itself.
(function () {
  "use strict";

  var METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
  var doc = null;

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "class") e.className = attrs[k];
        else if (k === "text") e.textContent = attrs[k];
        else e.setAttribute(k, attrs[k]);
      });
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }

  // resolve follows a local "$ref" ("#/components/schemas/X").
  function resolve(obj) {
    var seen = 0;
    while (obj && obj.$ref && seen < 20) {
      var parts = obj.$ref.replace(/^#\//, "").split("/");
      var cur = doc;
      for (var i = 0; i < parts.length && cur; i++) {
        cur = cur[parts[i].replace(/~1/g, "/").replace(/~0/g, "~")];
      }
      if (!cur) return { description: "unresolved reference " + obj.$ref };
      obj = cur;
      seen++;
    }
    return obj || {};
  }

  function refName(obj) {
    return obj && obj.$ref ? obj.$ref.split("/").pop() : "";
  }

  // typeText is a one-line description of a schema's type.
  function typeText(s) {
    var name = refName(s);
    s = resolve(s);
    var t = s.type;
    if (Array.isArray(t)) t = t.join(" | ");
    if (!t && s.anyOf) t = s.anyOf.map(typeText).join(" | ");
    if (!t && s.oneOf) t = s.oneOf.map(typeText).join(" | ");
    if (t === "array" && s.items) t = "array of " + typeText(s.items);
    if (s.format) t = (t || "") + " (" + s.format + ")";
    if (s.contentMediaType) t = (t || "") + " (" + s.contentMediaType + ")";
    return (name ? name + ": " : "") + (t || "any");
  }

  // schemaText renders a schema as indented text, to a bounded depth.
  function schemaText(s, indent, depth) {
    indent = indent || "";
    depth = depth || 0;
    var r = resolve(s);
    var lines = [];
    var facts = [];
    if (r.enum) facts.push("one of " + r.enum.map(JSON.stringify).join(", "));
    if (r.const !== undefined) facts.push("always " + JSON.stringify(r.const));
    if (r.default !== undefined) facts.push("default " + JSON.stringify(r.default));
    if (r.minimum !== undefined) facts.push("min " + r.minimum);
    if (r.maximum !== undefined) facts.push("max " + r.maximum);
    if (r.minItems !== undefined) facts.push("at least " + r.minItems + " items");
    if (r.maxItems !== undefined) facts.push("at most " + r.maxItems + " items");
    var head = typeText(s) + (facts.length ? "  [" + facts.join("; ") + "]" : "");
    if (r.description) head += "  — " + r.description;
    lines.push(indent + head);
    if (depth >= 5) return lines.join("\n");
    var req = r.required || [];
    Object.keys(r.properties || {}).forEach(function (p) {
      var sub = schemaText(r.properties[p], indent + "    ", depth + 1).replace(/^\s*/, "");
      lines.push(indent + "  " + p + (req.indexOf(p) >= 0 ? " *" : "") + ": " + sub);
    });
    var items = r.items ? resolve(r.items) : null;
    if (items && items.properties) {
      lines.push(indent + "  items:");
      lines.push(schemaText(r.items, indent + "    ", depth + 1));
    }
    if (r.additionalProperties && typeof r.additionalProperties === "object") {
      lines.push(indent + "  {any key}: " + schemaText(r.additionalProperties, indent + "    ", depth + 1).replace(/^\s*/, ""));
    }
    return lines.join("\n");
  }

  function paramTable(params) {
    if (!params.length) return null;
    var rows = params.map(function (p) {
      p = resolve(p);
      return el("tr", null, [
        el("td", null, [el("code", { text: p.name }), p.required ? el("span", { class: "req", text: " *" }) : null]),
        el("td", { text: p.in }),
        el("td", null, [el("code", { text: schemaText(p.schema || {}).split("\n")[0] })]),
        el("td", { text: p.description || "" })
      ]);
    });
    return el("table", null, [el("tr", null, [el("th", { text: "parameter" }), el("th", { text: "in" }), el("th", { text: "type" }), el("th", { text: "description" })])].concat(rows));
  }

  function bodySection(rb) {
    if (!rb) return null;
    rb = resolve(rb);
    var out = [el("h4", { text: "Request body" + (rb.required ? " (required)" : "") })];
    if (rb.description) out.push(el("p", { text: rb.description }));
    Object.keys(rb.content || {}).forEach(function (ct) {
      out.push(el("div", null, [el("code", { text: ct })]));
      if (rb.content[ct].schema) out.push(el("div", { class: "schema", text: schemaText(rb.content[ct].schema) }));
    });
    return el("div", null, out);
  }

  function responsesSection(responses) {
    var rows = Object.keys(responses || {}).sort().map(function (code) {
      var r = resolve(responses[code]);
      var cells = [el("div", { text: r.description || "" })];
      Object.keys(r.content || {}).forEach(function (ct) {
        cells.push(el("div", null, [el("code", { text: ct })]));
        if (r.content[ct].schema) cells.push(el("div", { class: "schema", text: schemaText(r.content[ct].schema) }));
      });
      return el("tr", null, [el("td", null, [el("code", { text: code })]), el("td", null, cells)]);
    });
    if (!rows.length) return null;
    return el("div", null, [el("h4", { text: "Responses" }),
      el("table", null, [el("tr", null, [el("th", { text: "status" }), el("th", { text: "meaning and body" })])].concat(rows))]);
  }

  // withCode is a paragraph of text whose `quoted` parts (Markdown's code
  // spans, as the OpenAPI descriptions write them) are shown as code.
  function withCode(tag, text) {
    return el(tag, null, String(text).split("`").map(function (part, i) {
      return i % 2 ? el("code", { text: part }) : part;
    }));
  }

  // fields counts the form fields made, for their ids (a label names its
  // field by id, so a screen reader reads the field's name).
  var fields = 0;
  function labelled(form, text, input) {
    var id = "f" + (++fields);
    input.setAttribute("id", id);
    form.appendChild(el("label", { text: text, for: id }));
    form.appendChild(input);
  }

  // shownMax is the most characters of an answer shown on the page; the
  // whole answer is offered as a download.
  var shownMax = 100000;

  // tryForm builds a form that sends the operation's request from the page.
  function tryForm(method, path, params, rb) {
    var form = el("form", { class: "try" });
    var inputs = [];
    params.forEach(function (p) {
      p = resolve(p);
      if (p.in !== "query" && p.in !== "path") return;
      var s = resolve(p.schema || {});
      var input = el("input", { name: p.name, placeholder: s.default !== undefined ? String(s.default) : "" });
      inputs.push({ kind: p.in, name: p.name, input: input });
      labelled(form, p.name + " (" + p.in + ")", input);
    });
    var bodyKind = null;
    if (rb) {
      rb = resolve(rb);
      var content = rb.content || {};
      if (content["multipart/form-data"]) {
        bodyKind = "multipart";
        var s = resolve(content["multipart/form-data"].schema || {});
        Object.keys(s.properties || {}).forEach(function (name) {
          var ps = resolve(s.properties[name]);
          var isFile = ps.format === "binary" || ps.contentMediaType !== undefined ||
            (ps.type === "string" && ps.contentEncoding !== undefined);
          var input = el("input", isFile ? { type: "file", name: name } : { name: name, placeholder: ps.default !== undefined ? String(ps.default) : "" });
          inputs.push({ kind: isFile ? "file" : "field", name: name, input: input });
          labelled(form, name + ((s.required || []).indexOf(name) >= 0 ? " *" : ""), input);
        });
      } else if (content["application/json"]) {
        bodyKind = "json";
        var ta = el("textarea", { name: "body" });
        inputs.push({ kind: "json", name: "body", input: ta });
        labelled(form, "JSON body", ta);
      }
    }
    var out = el("pre", { class: "result", text: "" });
    out.hidden = true;
    var send = el("button", { type: "submit", text: "Send " + method.toUpperCase() + " " + path });
    var saved = el("a", { class: "saved", text: "" });
    saved.hidden = true;
    form.appendChild(send);
    form.appendChild(saved);
    form.appendChild(out);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var url = path;
      var query = new URLSearchParams();
      var fd = bodyKind === "multipart" ? new FormData() : null;
      var body = null;
      inputs.forEach(function (i) {
        if (i.kind === "path") url = url.replace("{" + i.name + "}", encodeURIComponent(i.input.value));
        else if (i.kind === "query" && i.input.value !== "") query.append(i.name, i.input.value);
        else if (i.kind === "file" && i.input.files.length) fd.append(i.name, i.input.files[0]);
        else if (i.kind === "field" && i.input.value !== "") fd.append(i.name, i.input.value);
        else if (i.kind === "json") body = i.input.value;
      });
      var qs = query.toString();
      var opts = { method: method.toUpperCase() };
      if (fd) opts.body = fd;
      if (body !== null) { opts.body = body; opts.headers = { "Content-Type": "application/json" }; }
      // A service with API_TOKEN wants the token: asked for on the first
      // 401 and kept for this tab (sessionStorage), as the classifier's page does.
      var token = sessionStorage.getItem("archivekit-token");
      if (token) { opts.headers = opts.headers || {}; opts.headers["Authorization"] = "Bearer " + token; }
      out.hidden = false;
      out.textContent = "sending…";
      saved.hidden = true;
      send.disabled = true; // one request at a time from this form
      var started = performance.now();
      // Paths in the document are absolute from the service root; the page is
      // /docs, so a relative URL keeps working behind a path prefix.
      fetch(url.replace(/^\//, "") + (qs ? "?" + qs : ""), opts).then(function (resp) {
        if (resp.status === 401) {
          var t = window.prompt("This service needs its access token (API_TOKEN); send the request again after entering it:");
          if (t) sessionStorage.setItem("archivekit-token", t.trim());
        }
        var ct = resp.headers.get("Content-Type") || "";
        var head = resp.status + " " + resp.statusText + "  (" + Math.round(performance.now() - started) + " ms, " + (ct || "no content type") + ")\n\n";
        out.className = "result " + (resp.ok ? "status-ok" : "status-err");
        var disposition = /filename="([^"]+)"/.exec(resp.headers.get("Content-Disposition") || "");
        return resp.blob().then(function (b) {
          // The whole answer as a download, under the service's name for it.
          if (saved.href) URL.revokeObjectURL(saved.href);
          saved.href = URL.createObjectURL(b);
          saved.download = disposition ? disposition[1] : "answer";
          saved.textContent = "Download the answer (" + b.size + " bytes" + (disposition ? ", " + disposition[1] : "") + ")";
          saved.hidden = false;
          if (!/json|text|xml|html/.test(ct)) { out.textContent = head + b.size + " bytes of " + (b.type || "binary data"); return; }
          return b.text().then(function (t) {
            if (/json/.test(ct)) { try { t = JSON.stringify(JSON.parse(t), null, 2); } catch (e) { /* keep the raw text */ } }
            if (t.length > shownMax) t = t.slice(0, shownMax) + "\n… (" + (t.length - shownMax) + " more characters: the download holds the whole answer)";
            out.textContent = head + t;
          });
        });
      }).catch(function (err) {
        out.className = "result status-err";
        out.textContent = "request failed: " + err;
      }).then(function () { send.disabled = false; });
    });
    return form;
  }

  function render() {
    var info = doc.info || {};
    document.title = (info.title || "API") + " documentation";
    document.getElementById("title").textContent = info.title || "API";
    document.getElementById("meta").textContent = "version " + (info.version || "?") + " · OpenAPI " + (doc.openapi || "?");
    document.getElementById("description").replaceChildren(withCode("span", info.description || ""));
    var ops = document.getElementById("ops");
    ops.textContent = "";
    Object.keys(doc.paths || {}).sort().forEach(function (path) {
      var item = doc.paths[path];
      var common = item.parameters || [];
      METHODS.forEach(function (m) {
        var op = item[m];
        if (!op) return;
        var params = common.concat(op.parameters || []);
        var cls = ["get", "post", "put", "delete"].indexOf(m) >= 0 ? "m-" + m : "m-other";
        var body = el("div", { class: "body" }, [
          op.description ? withCode("p", op.description) : null,
          paramTable(params),
          bodySection(op.requestBody),
          responsesSection(op.responses),
          tryForm(m, path, params, op.requestBody)
        ]);
        ops.appendChild(el("details", { class: "op", id: (op.operationId || m + path) }, [
          el("summary", null, [el("span", { class: "method " + cls, text: m }), el("span", { class: "path", text: path }), el("span", { text: op.summary || "" })]),
          body
        ]));
      });
    });
    // Open the operation named in the address (#operationId).
    var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (target && target.tagName === "DETAILS") {
      target.open = true;
      target.scrollIntoView();
    }
  }

  fetch("openapi.json").then(function (r) {
    if (!r.ok) throw new Error("openapi.json answered " + r.status);
    return r.json();
  }).then(function (d) {
    doc = d;
    render();
  }).catch(function (err) {
    var ops = document.getElementById("ops");
    ops.textContent = "Could not load the OpenAPI document: " + err;
  });
})();
