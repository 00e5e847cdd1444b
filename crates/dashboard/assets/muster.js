// Muster dashboard: drag and drop on the board, live updates from the event stream,
// and confirmation of destructive buttons. No inline code: the page's CSP forbids it.
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

  const refreshBoard = () => {
    const board = document.getElementById("columns");
    if (!board || !window.htmx) return;
    const form = document.querySelector("form.filters");
    const query = form ? new URLSearchParams(new FormData(form)).toString() : "";
    window.htmx.ajax("GET", board.dataset.live + (query ? "?" + query : ""), {
      target: "#columns",
      swap: "innerHTML",
    });
  };

  // Drag a card onto a column: a transition. A refusal shows the API's message and the
  // board is read again, so the card is back where the server says it is.
  let dragged = null;
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
    refreshBoard();
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
    source.onopen = () => {
      document.body.dataset.live = "open";
    };
  }

  // Buttons that cannot be undone ask first.
  document.addEventListener("submit", (e) => {
    const form = e.target;
    const question = form.dataset && form.dataset.confirm;
    if (question && !window.confirm(question)) e.preventDefault();
  });
})();
