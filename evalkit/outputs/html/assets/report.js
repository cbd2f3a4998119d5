// evalkit report: the sessions table (sort, filter, pages), and opening folded parts on demand.
// The only script the pages run (their Content-Security-Policy allows nothing else); it reads
// the rows from a JSON data block, writes text with textContent only, and requests nothing.
"use strict";

(function () {
  var PAGE = 50;

  function openTarget() {
    // A deep link (#call-7, #sec-3-2) into folded parts: open every <details> around it.
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var el = document.getElementById(id);
    if (!el) return;
    for (var p = el; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
    }
    el.scrollIntoView();
  }

  function foldButtons() {
    var expand = document.getElementById("expand-all");
    var collapse = document.getElementById("collapse-all");
    function setAll(open) {
      var all = document.querySelectorAll("details");
      for (var i = 0; i < all.length; i++) all[i].open = open;
    }
    if (expand) expand.addEventListener("click", function () { setAll(true); });
    if (collapse) collapse.addEventListener("click", function () { setAll(false); });
  }

  function parseFilter(text) {
    // Words match any cell; column:text one column; column>n, column<n, column=n a range.
    var terms = [];
    var parts = text.trim().split(/\s+/);
    for (var i = 0; i < parts.length; i++) {
      var t = parts[i];
      if (!t) continue;
      var m = /^([A-Za-z_][\w]*)(:|>=|<=|>|<|=)(.*)$/.exec(t);
      if (m) terms.push({ col: m[1], op: m[2], value: m[3].toLowerCase() });
      else terms.push({ col: null, op: ":", value: t.toLowerCase() });
    }
    return terms;
  }

  function matches(row, terms, index, shown) {
    for (var i = 0; i < terms.length; i++) {
      var t = terms[i];
      if (t.col === null) {
        var hit = false;
        for (var j = 0; j < shown.length && !hit; j++) {
          var cell = row[shown[j]];
          if (cell !== null && String(cell).toLowerCase().indexOf(t.value) >= 0) hit = true;
        }
        if (!hit) return false;
        continue;
      }
      var k = index[t.col];
      if (k === undefined) return false;
      var v = row[k];
      if (t.op === ":") {
        if (v === null || String(v).toLowerCase().indexOf(t.value) < 0) return false;
        continue;
      }
      var n = Number(t.value);
      if (v === null || typeof v !== "number" || isNaN(n)) return false;
      if (t.op === ">" && !(v > n)) return false;
      if (t.op === "<" && !(v < n)) return false;
      if (t.op === ">=" && !(v >= n)) return false;
      if (t.op === "<=" && !(v <= n)) return false;
      if (t.op === "=" && !(v === n)) return false;
    }
    return true;
  }

  function compare(a, b) {
    // Missing values last, numbers by value, text by natural order.
    if (a === null && b === null) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  function format(v, kind) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v !== "number") return String(v);
    if (kind === "fraction") return (v * 100).toFixed(1) + "%";
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    return v.toLocaleString("en-US", { maximumFractionDigits: 3 });
  }

  function sessionsTable() {
    var data = document.getElementById("session-data");
    var table = document.getElementById("session-table");
    if (!data || !table) return;
    var doc = JSON.parse(data.textContent);
    var cols = doc.columns, rows = doc.rows, links = doc.links, kinds = doc.kinds;
    var shown = (doc.shown || cols.map(function (_, k) { return k; })).slice();
    var index = {};
    for (var c = 0; c < cols.length; c++) index[cols[c]] = c;
    var order = rows.map(function (_, i) { return i; });
    var visible = order, page = 0, sortCol = -1, sortDir = 1;
    var head = table.tHead.rows[0], body = table.tBodies[0];
    var filter = document.getElementById("session-filter");
    var count = document.getElementById("session-count");
    var info = document.getElementById("page-info");
    var list = document.getElementById("column-list");

    function drawHead() {
      while (head.firstChild) head.removeChild(head.firstChild);
      shown.forEach(function (k) {
        var th = document.createElement("th");
        th.textContent = cols[k];
        th.title = doc.meanings[k] || "";
        if (k === sortCol) th.className = sortDir > 0 ? "sorted-asc" : "sorted-desc";
        th.addEventListener("click", function () {
          sortDir = sortCol === k ? -sortDir : 1;
          sortCol = k;
          drawHead();
          apply();
        });
        head.appendChild(th);
      });
    }

    cols.forEach(function (name, k) {
      // The column list: a checkbox per column; the log column is always shown.
      if (k === 0 || !list) return;
      var label = document.createElement("label");
      var box = document.createElement("input");
      box.type = "checkbox";
      box.checked = shown.indexOf(k) >= 0;
      box.dataset.col = name;
      box.addEventListener("change", function () {
        shown = shown.filter(function (x) { return x !== k; });
        if (box.checked) shown.push(k);
        shown.sort(function (a, b) { return a - b; });
        drawHead();
        draw();
      });
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + name));
      label.title = doc.meanings[k] || "";
      list.appendChild(label);
    });

    function apply() {
      var terms = parseFilter(filter.value);
      visible = order.filter(function (i) { return matches(rows[i], terms, index, shown); });
      if (sortCol >= 0) {
        visible.sort(function (a, b) {
          var x = rows[a][sortCol], y = rows[b][sortCol];
          if (x === null || y === null) return compare(x, y) || a - b;
          return compare(x, y) * sortDir || a - b;
        });
      }
      page = 0;
      draw();
    }

    function draw() {
      var pages = Math.max(1, Math.ceil(visible.length / PAGE));
      if (page >= pages) page = pages - 1;
      while (body.firstChild) body.removeChild(body.firstChild);
      visible.slice(page * PAGE, page * PAGE + PAGE).forEach(function (i) {
        var tr = document.createElement("tr");
        shown.forEach(function (k) {
          var v = rows[i][k];
          var td = document.createElement("td");
          if (k === 0) {
            var a = document.createElement("a");
            a.href = links[i];
            a.textContent = format(v, kinds[k]);
            td.appendChild(a);
          } else {
            td.textContent = format(v, kinds[k]);
          }
          if (typeof v === "number") td.className = "num";
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      count.textContent = visible.length + " of " + rows.length + " sessions";
      info.textContent = "page " + (page + 1) + " of " + pages;
    }

    filter.addEventListener("input", apply);
    document.getElementById("page-prev").addEventListener("click", function () {
      if (page > 0) { page -= 1; draw(); }
    });
    document.getElementById("page-next").addEventListener("click", function () {
      if ((page + 1) * PAGE < visible.length) { page += 1; draw(); }
    });
    drawHead();
    draw();
  }

  document.addEventListener("DOMContentLoaded", function () {
    foldButtons();
    sessionsTable();
    openTarget();
    window.addEventListener("hashchange", openTarget);
  });
})();
