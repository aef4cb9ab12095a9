// The consoles' script (webhooks::console, compiled into the binary). It only runs actions: a
// button with data-action calls the JSON API with the session cookie and the page's CSRF token,
// shows the result in #action-result, and reloads the page (the result survives the reload).
//   data-method  POST (default), PATCH or DELETE
//   data-url     the API path, e.g. /v1/events/ID/replay
//   data-body    the JSON body; the text "{since}" is replaced by input#since as RFC 3339
//   data-secret  present: show the answer's "secret" and/or "public_key" in #new-secret and do not
//                reload
//   data-idempotency  present: send a new random Idempotency-Key (POST /v1/events)
"use strict";
(function () {
  const kResultKey = "webhooks-console-result";

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  function showResult(text) {
    const out = document.getElementById("action-result");
    if (out) out.textContent = text;
  }

  function sinceValue() {
    const input = document.getElementById("since");
    if (!input || !input.value) return null;
    // A datetime-local value has no zone: it is read as UTC, like every time the console shows
    // (new Date would read it as the browser's local time).
    const date = new Date(/(Z|[+-]\d\d:\d\d)$/i.test(input.value) ? input.value : input.value + "Z");
    return isNaN(date.getTime()) ? null : date.toISOString();
  }

  function newKey() {
    if (window.crypto && crypto.randomUUID) return "console-" + crypto.randomUUID();
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return "console-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function describe(button, status, answer) {
    const name = button.dataset.action;
    if (status >= 200 && status < 300) {
      let detail = "";
      for (const key of ["replayed", "recovered", "created", "tasks", "event_id"]) {
        if (answer && answer[key] !== undefined) detail += " " + key + "=" + answer[key];
      }
      return name + ": done (" + status + ")" + detail;
    }
    const error = answer && answer.error ? answer.error.code + ": " + answer.error.message : "";
    return name + ": failed (" + status + ") " + error;
  }

  async function run(button) {
    let body = button.dataset.body;
    if (body && body.includes("{since}")) {
      const since = sinceValue();
      if (!since) return showResult(button.dataset.action + ": choose a time in 'since' first");
      body = body.split("{since}").join(since);
    }
    const headers = { "X-CSRF-Token": csrfToken() };
    if (body) headers["Content-Type"] = "application/json";
    if (button.dataset.idempotency !== undefined) headers["Idempotency-Key"] = newKey();
    showResult(button.dataset.action + ": ...");
    let status = 0, answer = null;
    try {
      const response = await fetch(button.dataset.url, {
        method: button.dataset.method || "POST", headers: headers, body: body || undefined,
        credentials: "same-origin" });
      status = response.status;
      const text = await response.text();
      try { answer = text ? JSON.parse(text) : null; } catch (e) { answer = null; }
    } catch (e) {
      return showResult(button.dataset.action + ": network error " + e);
    }
    const text = describe(button, status, answer);
    if (button.dataset.secret !== undefined && status >= 200 && status < 300 && answer) {
      const secret = document.getElementById("new-secret");
      // v1: the secret; v1a: the public key (the signing key is never shown); both: the two.
      if (secret) secret.textContent = [answer.secret, answer.public_key].filter(Boolean).join(" ");
      return showResult(text);
    }
    sessionStorage.setItem(kResultKey, text);
    window.location.reload();
  }

  document.addEventListener("DOMContentLoaded", function () {
    const saved = sessionStorage.getItem(kResultKey);
    if (saved !== null) {
      sessionStorage.removeItem(kResultKey);
      showResult(saved);
    }
    for (const button of document.querySelectorAll("button[data-action]")) {
      button.addEventListener("click", function (event) {
        event.preventDefault();
        run(button);
      });
    }
  });
})();
