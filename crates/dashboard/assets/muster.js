// Muster dashboard: drag and drop on the board, live updates from the event stream,
// a run's log that stops being followed when refused, and confirmation of destructive
// buttons. No inline code: the page's CSP forbids it.
"use strict";

(function () {
  const csrf = () => {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  };

  const notice = (message) => {
    const box = document.getElementById("notice");
    if (!box) return;
    box.replaceChildren();
    if (message) {
      const p = document.createElement("p");
      p.className = "notice error";
      p.textContent = message;
      box.appendChild(p);
    }
  };

  // Read the columns again; not while a card is held or a card's control has focus
  // (the swap would drop the card or the user's choice): then a moment later.
  let dragged = null;
  const refreshBoard = () => {
    const board = document.getElementById("columns");
    if (!board || !window.htmx) return;
    if (dragged || board.contains(document.activeElement)) {
      setTimeout(refreshBoard, 1000);
      return;
    }
    const form = document.querySelector("form.filters");
    const query = form ? new URLSearchParams(new FormData(form)).toString() : "";
    window.htmx.ajax("GET", board.dataset.live + (query ? "?" + query : ""), {
      target: "#columns",
      swap: "innerHTML",
    });
  };

  // Drag a card onto a column: a transition. A refusal shows the API's message and the
  // board is read again, so the card is back where the server says it is.
  document.addEventListener("dragstart", (e) => {
    const card = e.target.closest && e.target.closest("li.card[draggable]");
    if (!card) return;
    dragged = card;
    e.dataTransfer.effectAllowed = "move";
    e.dataTransfer.setData("text/plain", card.dataset.task);
    card.classList.add("dragging");
  });
  document.addEventListener("dragend", () => {
    if (dragged) dragged.classList.remove("dragging");
    dragged = null;
  });
  document.addEventListener("dragover", (e) => {
    const column = e.target.closest && e.target.closest("section.column");
    if (column && dragged) e.preventDefault();
  });
  document.addEventListener("drop", async (e) => {
    const column = e.target.closest && e.target.closest("section.column");
    if (!column || !dragged) return;
    e.preventDefault();
    const card = dragged;
    const to = column.dataset.status;
    if (card.dataset.status === to) return;
    column.querySelector("ul.cards").prepend(card);
    const body = new URLSearchParams({ status: to });
    let answer;
    try {
      answer = await fetch("/ui/tasks/" + card.dataset.task + "/move", {
        method: "POST",
        headers: { "X-CSRF-Token": csrf(), "Content-Type": "application/x-www-form-urlencoded" },
        body: body.toString(),
        credentials: "same-origin",
      });
    } catch (err) {
      notice("The move did not reach the server: " + err);
      refreshBoard();
      return;
    }
    if (answer.ok) {
      notice("");
      card.dataset.status = to;
    } else {
      notice(await answer.text());
    }
    dragged = null;
    refreshBoard();
  });

  // htmx leaves the page as it was when an answer is an error: say why. A run's log
  // that the server refuses to read (the session ended, the run is gone) is no longer
  // asked for every two seconds.
  document.addEventListener("htmx:responseError", (e) => {
    notice(e.detail.xhr.responseText || "The server refused: " + e.detail.xhr.status);
    const follow = e.detail.elt;
    const status = e.detail.xhr.status;
    if (follow && follow.id === "log-follow" && status >= 400 && status < 500) {
      const ended = document.createElement("p");
      ended.id = "log-follow";
      ended.className = "more";
      ended.textContent = "The log is no longer followed: reload the page.";
      follow.replaceWith(ended);
    }
  });
  document.addEventListener("htmx:sendError", () => {
    notice("The server cannot be reached; the board is not up to date.");
  });

  // Live: every task event reads the board again (at most once per half second).
  const board = document.getElementById("columns");
  if (board && window.EventSource) {
    let pending = null;
    const source = new EventSource("/ui/live");
    source.onmessage = () => {
      if (pending) return;
      pending = setTimeout(() => {
        pending = null;
        refreshBoard();
      }, 500);
    };
    document.body.dataset.live = "connecting";
    let opened = false;
    source.onopen = () => {
      // After a reconnection, what changed during the gap is read at once.
      if (opened) refreshBoard();
      opened = true;
      document.body.dataset.live = "open";
    };
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        document.body.dataset.live = "closed";
        notice("Live updates stopped (the session may have ended): reload the page.");
      } else {
        document.body.dataset.live = "connecting";
      }
    };
  }

  // Buttons that cannot be undone ask first.
  document.addEventListener("submit", (e) => {
    const form = e.target;
    const question = form.dataset && form.dataset.confirm;
    if (question && !window.confirm(question)) e.preventDefault();
  });
})();
