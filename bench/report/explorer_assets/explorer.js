"use strict";
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  var ARMS = D.arms, ROWS = D.rows, ROW_H = 24;
  var LABELS = D.arm_labels || ARMS;  // arm names with their flags ("[DEGRADED: ...]")
  // row: [id, category, question, gold, corrected gold, [[evidence id, turn text]], arms,
  //       adversarial (trap) answer]
  // arm: [status, answer, correct, f1, context tokens, miss, evidence ranks, context, error]
  var $ = function (id) { return document.getElementById(id); };
  var list = $("list"), spacer = $("spacer"), detail = $("detail");
  var shown = [], selected = -1;

  function opt(sel, value, text) {
    var o = document.createElement("option"); o.value = value; o.textContent = text || value; sel.appendChild(o);
  }
  var cats = [];
  ROWS.forEach(function (r) { if (cats.indexOf(r[1]) < 0) cats.push(r[1]); });
  cats.sort().forEach(function (c) { opt($("f-cat"), c); });
  ARMS.forEach(function (a, j) { opt($("f-arm"), a, LABELS[j]); });

  function disagree(r) {
    var seen = {};
    r[6].forEach(function (a) { if (a && a[0] === "ok" && a[2] !== null) seen[a[2]] = 1; });
    return Object.keys(seen).length > 1;
  }
  function armOk(a, verdict, miss) {
    if (!a) return false;
    if (verdict === "correct" && a[2] !== true) return false;
    if (verdict === "wrong" && a[2] !== false) return false;
    if (miss && a[5] !== miss) return false;
    return true;
  }
  function keep(r, f) {
    if (f.cat && r[1] !== f.cat) return false;
    if (f.disagree && !disagree(r)) return false;
    if (f.text && (r[0] + " " + r[2]).toLowerCase().indexOf(f.text) < 0) return false;
    if (!f.verdict && !f.miss) return f.arm < 0 || r[6][f.arm] !== null;
    if (f.arm >= 0) return armOk(r[6][f.arm], f.verdict, f.miss);
    return r[6].some(function (a) { return armOk(a, f.verdict, f.miss); });
  }
  function applyFilters() {
    var f = {
      cat: $("f-cat").value, arm: ARMS.indexOf($("f-arm").value), verdict: $("f-verdict").value,
      miss: $("f-miss").value, disagree: $("f-disagree").checked,
      text: $("f-text").value.trim().toLowerCase()
    };
    shown = [];
    for (var i = 0; i < ROWS.length; i++) if (keep(ROWS[i], f)) shown.push(i);
    $("count").textContent = shown.length + " of " + ROWS.length + " questions · dots: " + LABELS.join(", ");
    spacer.style.height = shown.length * ROW_H + "px";
    list.scrollTop = 0;
    render();
  }
  // Virtualised list: only the rows inside the viewport (plus a margin) are in the DOM.
  function render() {
    var first = Math.max(0, Math.floor(list.scrollTop / ROW_H) - 10);
    var last = Math.min(shown.length, first + Math.ceil(list.clientHeight / ROW_H) + 20);
    var frag = document.createDocumentFragment();
    for (var k = first; k < last; k++) {
      var i = shown[k], r = ROWS[i], div = document.createElement("div");
      div.className = "row" + (i === selected ? " sel" : "");
      div.style.top = k * ROW_H + "px";
      div.dataset.i = i;
      r[6].forEach(function (a) {
        var s = document.createElement("span");
        s.className = "dot " + (!a || a[2] === null ? "na" : a[2] ? "ok" : "bad");
        div.appendChild(s);
      });
      div.appendChild(document.createTextNode(" " + r[0] + " · " + r[1] + " · " + r[2]));
      frag.appendChild(div);
    }
    spacer.replaceChildren(frag);
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function kv(table, k, v) {
    var tr = el("tr"); tr.appendChild(el("th", k)); tr.appendChild(el("td", v)); table.appendChild(tr);
  }
  // The saved context, with every line holding an evidence turn's text wrapped in <mark>.
  function contextBlock(text, turns) {
    var pre = el("pre");
    text.split("\n").forEach(function (line) {
      var hit = turns.some(function (t) { return t && line.indexOf(t) >= 0; });
      pre.appendChild(hit ? el("mark", line) : document.createTextNode(line));
      pre.appendChild(document.createTextNode("\n"));
    });
    return pre;
  }
  function show(i) {
    selected = i; render();
    var r = ROWS[i], t = el("table");
    detail.replaceChildren(el("h2", r[0] + " — " + r[1]));
    kv(t, "question", r[2]);
    kv(t, "gold", r[3] === null ? "– (unanswerable: the right answer abstains)" : r[3]);
    if (r[7] !== null) kv(t, "trap answer", r[7]);
    if (r[4] !== null) kv(t, "errata gold", r[4]);
    r[5].forEach(function (e) { kv(t, "evidence " + e[0], e[1] === null ? "(turn text not available)" : e[1]); });
    detail.appendChild(t);
    var turns = r[5].map(function (e) { return e[1]; });
    r[6].forEach(function (a, j) {
      var box = el("div", null, "arm");
      box.appendChild(el("h3", LABELS[j]));
      if (!a) { box.appendChild(el("p", "no result")); detail.appendChild(box); return; }
      var at = el("table");
      kv(at, "answer", a[1] === null ? "–" : a[1]);
      var verdict = a[0] !== "ok" ? "error: " + a[8] : a[2] === null ? "no outcome" : a[2] ? "correct" : "wrong";
      var vt = el("tr"); vt.appendChild(el("th", "verdict"));
      vt.appendChild(el("td", verdict, a[2] === true ? "v-ok" : a[2] === false ? "v-bad" : ""));
      at.appendChild(vt);
      kv(at, "F1", a[3] === null ? "–" : a[3].toFixed(3));
      kv(at, "context tokens", a[4] === null ? "–" : a[4].toLocaleString());
      if (a[5]) kv(at, "miss", a[5] === "retrieval" ? "retrieval miss (no evidence turn retrieved)" : "reader miss (evidence retrieved, answer wrong)");
      if (a[6]) kv(at, "evidence rank", a[6].map(function (n, x) { return r[5][x][0] + ": " + (n ? "#" + n : "not retrieved"); }).join(", "));
      box.appendChild(at);
      if (a[7]) box.appendChild(contextBlock(a[7], turns));
      else box.appendChild(el("p", "context not saved (run with save_context=true)", "hint"));
      detail.appendChild(box);
    });
  }
  var pending = false;
  list.addEventListener("scroll", function () {
    if (pending) return; pending = true;
    requestAnimationFrame(function () { pending = false; render(); });
  });
  list.addEventListener("click", function (ev) {
    var row = ev.target.closest(".row"); if (row) show(Number(row.dataset.i));
  });
  ["f-cat", "f-arm", "f-verdict", "f-miss", "f-disagree", "f-text"].forEach(function (id) {
    $(id).addEventListener("input", applyFilters);
  });
  window.addEventListener("resize", render);
  // Filters and the selected question can be preset in the URL, e.g.
  // explorer.html#arm=rag&verdict=wrong&miss=reader&q=conv-26:3 (for links and screenshots).
  var preset = {};
  location.hash.slice(1).split("&").forEach(function (kv) {
    var eq = kv.indexOf("="); if (eq > 0) preset[kv.slice(0, eq)] = decodeURIComponent(kv.slice(eq + 1));
  });
  ["cat", "arm", "verdict", "miss", "text"].forEach(function (k) {
    if (preset[k] !== undefined) $("f-" + k).value = preset[k];
  });
  if (preset.disagree === "1") $("f-disagree").checked = true;
  applyFilters();
  var wanted = -1;
  for (var n = 0; n < ROWS.length; n++) if (ROWS[n][0] === preset.q) wanted = n;
  if (wanted >= 0) show(wanted); else if (shown.length) show(shown[0]);
})();
