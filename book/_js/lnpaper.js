// A notebook page opens with its lesson; its evidence (the section "## The evidence": the graded
// claims, their tables and tests) is folded behind a button, so that a reader meets the story first.
// A link to an anchor inside the evidence (from the page's contents, the claims page or another
// site) opens it, and so does the browser's find-in-page where it can search folded text
// ("until-found"). Without this script the evidence is simply shown. Loaded in the page's head, so
// the evidence is already hidden when it first paints (book/_css/lnpaper.css, "lnpaper-js").
(function () {
  "use strict";

  const SECTION_ID = "the-evidence";
  const SHOW = "Show the evidence: graded claims, tables and tests";
  const HIDE = "Hide the evidence";

  document.documentElement.classList.add("lnpaper-js");

  function targetOf(hash) {
    if (!hash || hash.length < 2) {
      return null;
    }
    try {
      return document.getElementById(decodeURIComponent(hash.slice(1)));
    } catch (error) {
      return null; // a malformed escape in the address: nothing to open
    }
  }

  function fold(section) {
    const heading = section.querySelector(":scope > h2");
    if (!heading) {
      return;
    }
    const body = document.createElement("div");
    body.className = "lnpaper-evidence-body";
    body.id = SECTION_ID + "-body";
    while (heading.nextSibling) {
      body.appendChild(heading.nextSibling);
    }
    const button = document.createElement("button");
    button.type = "button";
    button.className = "lnpaper-evidence-toggle";
    button.setAttribute("aria-controls", body.id);
    section.append(button, body);
    section.classList.add("lnpaper-evidence");
    // Chromium and Firefox find text inside an element hidden "until-found" and fire beforematch.
    const findable = "onbeforematch" in body;

    function show(open) {
      if (open) {
        body.removeAttribute("hidden");
      } else {
        body.setAttribute("hidden", findable ? "until-found" : "");
      }
      section.classList.toggle("lnpaper-open", open);
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? HIDE : SHOW;
    }

    // Open the evidence when `hash` names the section or something inside it, and bring the target
    // into view (the browser could not scroll to it while it was hidden).
    function reveal(hash) {
      const target = targetOf(hash);
      if (target && (target === section || body.contains(target))) {
        const wasOpen = !body.hasAttribute("hidden");
        show(true);
        if (!wasOpen) {
          target.scrollIntoView();
        }
      }
    }

    show(false);
    button.addEventListener("click", () => show(body.hasAttribute("hidden")));
    body.addEventListener("beforematch", () => show(true));
    window.addEventListener("hashchange", () => reveal(window.location.hash));
    // A click on a link to the address already shown fires no hashchange: open before it scrolls.
    document.addEventListener("click", (event) => {
      const link = event.target.closest && event.target.closest("a[href*='#']");
      if (link && link.pathname === window.location.pathname && link.host === window.location.host) {
        reveal(link.hash);
      }
    });
    reveal(window.location.hash);
  }

  function start() {
    const section = document.getElementById(SECTION_ID);
    if (section && section.tagName === "SECTION") {
      try {
        fold(section);
      } finally {
        section.classList.add("lnpaper-evidence"); // the stylesheet stops hiding it before the fold
      }
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
