// ecc web pages: live parts without inline script (the Content-Security-Policy forbids it).
// data-poll="URL": replace the element's content with the server's fragment every few seconds
// (not while the user types in it). data-stream="URL": append server-sent output lines as text,
// keeping the newest data-keep lines. form[data-confirm]: ask before submitting.
"use strict";

(function () {
  var POLL_MS = 2000;

  function shown(text) {
    // control characters (terminal escapes) are shown, never obeyed
    return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g,
      function (c) {
        var code = c.charCodeAt(0);
        return code < 256 ? "\\x" + ("0" + code.toString(16)).slice(-2)
          : "\\u" + ("000" + code.toString(16)).slice(-4);
      });
  }

  function typingIn(element) {
    var active = document.activeElement;
    return active && element.contains(active) &&
      (active.tagName === "INPUT" || active.tagName === "TEXTAREA" || active.tagName === "SELECT");
  }

  function poll(element) {
    var url = element.getAttribute("data-poll");
    var last = null;
    function tick() {
      if (document.hidden) { return; }
      fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (response) {
          if (response.status === 401) { window.location.assign("/web/signin"); return null; }
          return response.ok ? response.text() : null;
        })
        .then(function (html) {
          if (html === null || html === last || typingIn(element)) { return; }
          last = html;
          // the fragment is server-rendered with every value escaped (Jinja autoescape)
          element.innerHTML = html;
          wire(element);
        })
        .catch(function () { /* the next tick tries again */ });
    }
    window.setInterval(tick, POLL_MS);
  }

  function stream(pre) {
    var keep = parseInt(pre.getAttribute("data-keep") || "2000", 10);
    var status = document.getElementById("stream-state");
    var source = new EventSource(pre.getAttribute("data-stream"));
    var pending = [];
    function flush() {
      // one layout per frame, however many lines arrived in it
      if (!pending.length) { return; }
      var follow = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      var batch = document.createDocumentFragment();
      pending.forEach(function (line) {
        var span = document.createElement("span");
        span.className = line.stream === "stderr" ? "line err" : "line";
        span.textContent = shown(line.line);
        batch.appendChild(span);
        batch.appendChild(document.createTextNode("\n"));
      });
      pending = [];
      pre.appendChild(batch);
      var extra = pre.childNodes.length - keep * 2;
      while (extra-- > 0) { pre.removeChild(pre.firstChild); }
      if (follow) { pre.scrollTop = pre.scrollHeight; }
    }
    source.addEventListener("line", function (event) {
      if (!pending.length) { window.requestAnimationFrame(flush); }
      pending.push(JSON.parse(event.data));
      // a hidden tab gets no frames: keep only what the page would show
      if (pending.length > keep * 2) { pending = pending.slice(-keep); }
    });
    source.addEventListener("end", function () {
      source.close();
      if (pending.length) { flush(); }
      if (status) { status.textContent = "The session ended."; }
    });
    source.onerror = function () {
      if (status) { status.textContent = "Reconnecting…"; }
    };
    source.onopen = function () {
      if (status) { status.textContent = "Live"; }
    };
  }

  function wire(root) {
    root.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-poll]").forEach(poll);
    document.querySelectorAll("[data-stream]").forEach(stream);
    wire(document);
    var output = document.getElementById("output");
    if (output) { output.scrollTop = output.scrollHeight; }
  });
})();
