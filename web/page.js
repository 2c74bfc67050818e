// What every kfpbench page shares, inlined before the page's own script:
// script errors listed in #kfpbench-errors (the browser tests fail on any)
// and small DOM helpers. Pages take what they need from kfpbenchPage.
const kfpbenchPage = (function () {
  "use strict";

  const errorList = document.getElementById("kfpbench-errors");
  function reportError(text) {
    const li = document.createElement("li");
    li.className = "js-error";
    li.textContent = String(text);
    errorList.appendChild(li);
    errorList.hidden = false;
  }
  window.addEventListener("error", (e) => reportError(e.message + " (" + e.lineno + ":" + e.colno + ")"));
  window.addEventListener("unhandledrejection", (e) => reportError("unhandled rejection: " + e.reason));
  const consoleError = console.error.bind(console);
  console.error = (...args) => {
    reportError(args.join(" "));
    consoleError(...args);
  };

  // An element with attributes ("class" sets className) and children (text
  // for strings and numbers; null and undefined skipped).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  function section(title, note) {
    const s = el("section", {}, el("h2", {}, title));
    if (note) s.appendChild(el("p", { class: "note" }, note));
    document.getElementById("app").appendChild(s);
    return s;
  }

  function table(headers, rows, numericFrom) {
    const t = el("table");
    const tr = el("tr");
    headers.forEach((h, i) => tr.appendChild(el("th", i >= numericFrom ? { class: "num" } : {}, h)));
    t.appendChild(el("thead", {}, tr));
    const body = el("tbody");
    for (const row of rows) {
      const r = el("tr");
      row.forEach((c, i) => {
        const td = el("td", i >= numericFrom ? { class: "num" } : {});
        if (c instanceof Node) td.appendChild(c);
        else td.textContent = c === null || c === undefined ? "" : String(c);
        r.appendChild(td);
      });
      body.appendChild(r);
    }
    t.appendChild(body);
    return t;
  }

  return { reportError, el, section, table };
})();
