// On a narrow screen the header's links scroll sideways in one row
// (ratchet.css). This keeps the current page's link in view: on load, and
// whenever the dashboard's router moves aria-current. Without script the
// row still scrolls; the link is only not brought into view.
const nav = document.querySelector(".site-nav");

function showCurrent() {
  const a = nav && nav.querySelector('a[aria-current="page"]');
  if (!a || nav.scrollWidth <= nav.clientWidth) return;
  // Scroll the nav only, never the page: scrollIntoView would move both.
  const left = a.offsetLeft - nav.offsetLeft, right = left + a.offsetWidth;
  if (left < nav.scrollLeft || right > nav.scrollLeft + nav.clientWidth) {
    nav.scrollLeft = Math.max(0, left - (nav.clientWidth - a.offsetWidth) / 2);
  }
}

if (nav) {
  showCurrent();
  new MutationObserver(showCurrent).observe(nav, { subtree: true, attributes: true, attributeFilter: ["aria-current"] });
  window.addEventListener("resize", showCurrent);
}
