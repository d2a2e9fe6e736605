"""``make site-test``: open every page of build/site/ in headless Chromium, as on a phone.

Each page (index, chapters, lectures, search; not the decks, which `make browser-test`
checks) is opened from disk at 390x844 and fails on:
- a console error or an uncaught exception of the page;
- a request to anything but the local disk (only file:, data:, blob:, about: URLs), and a
  local file that does not load (a script, stylesheet or font the page asks for);
- a broken internal link: an <a href> to a file of the site that does not exist, or to an
  #anchor that is not on its page;
- a missing image (an <img> that did not load);
- a page wider than the phone: the body's scrollWidth over the viewport's 390 px (pictures,
  tables and code may scroll inside their own box);
- a lecture whose equations MathJax did not typeset, or whose widgets did not render;
- a full-text search (search.html?q=retain_graph) that does not find chapter 04b.
A screenshot of the landing page (390 px and 1280 px wide) goes to build/site-check/.
Uses the browser helpers of scripts/browser_check.py (Debian's Chromium via playwright).

    python scripts/site_check.py [build/site/lectures/NN_name.html ...]
"""

import argparse
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_check import CHROMIUM, CHROMIUM_ARGS, LOCAL_URLS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "build" / "site"
OUT = ROOT / "build" / "site-check"
PHONE = {"width": 390, "height": 844}

PAGE_FACTS = """() => ({
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    images: [...document.querySelectorAll('img')].filter(i => !(i.complete && i.naturalWidth > 0))
              .map(i => i.getAttribute('src')),
    width: Math.max(document.body.scrollWidth, document.documentElement.scrollWidth),
    math: document.querySelectorAll('span.math, div.math').length,
    typeset: document.querySelectorAll('.MathJax, mjx-container, .MathJax_CHTML').length,
    mathErrors: document.querySelectorAll('.MathJax_Error, merror, mjx-merror').length,
    widgetViews: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
    widgets: document.querySelectorAll('.jupyter-widgets').length,
})"""


# What makes a page too wide: hide each child in turn, keep the one whose hiding narrows the
# page, and go down into it (run only on a page that failed).
CULPRIT = """() => { const width = () => document.body.scrollWidth, base = width();
    function find(element, depth) {
        for (const child of element.children) {
            const display = child.style.display; child.style.display = 'none';
            const narrower = width() < base; child.style.display = display;
            if (narrower) return (depth < 15 && find(child, depth + 1)) || child.outerHTML.slice(0, 120);
        }
        return null;
    }
    return find(document.body, 0); }"""


def site_pages():
    return sorted(p for p in SITE.rglob("*.html")
                  if p.relative_to(SITE).parts[0] not in ("slides", "_static", "notebooks"))


def wait_for_math(page, timeout=20):
    """MathJax 2 typesets after load, asynchronously: wait until its queue is empty."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = page.evaluate("""() => !window.MathJax || (window.MathJax.Hub &&
            window.MathJax.Hub.queue && window.MathJax.Hub.queue.pending === 0 &&
            window.MathJax.Hub.queue.running === 0 && !!document.querySelector('#MathJax_Message')
            && getComputedStyle(document.querySelector('#MathJax_Message')).display === 'none')""")
        if done:
            return True
        page.wait_for_timeout(200)
    return False


def check_page(context, path):
    problems, console, remote, failed = [], [], [], []
    page = context.new_page()
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith(LOCAL_URLS) else remote.append(r.url))
    page.on("requestfailed", lambda r: failed.append(r.url) if r.url.startswith("file:") else None)
    page.goto(path.as_uri(), wait_until="load")
    if page.evaluate("() => document.querySelectorAll('span.math, div.math').length") and \
            not wait_for_math(page):
        problems.append("MathJax did not finish typesetting within 20 s")
    page.wait_for_timeout(300)  # widgets render after load
    facts = page.evaluate(PAGE_FACTS)
    if facts["width"] > PHONE["width"]:
        problems.append(f"{facts['width']} px wide on a {PHONE['width']} px phone, because of: "
                        f"{page.evaluate(CULPRIT)}")
    page.close()
    problems += [f"image did not load: {src}" for src in facts["images"]]
    if facts["math"] and (facts["typeset"] == 0 or facts["mathErrors"]):
        problems.append(f"equations not typeset: {facts['math']} found, {facts['typeset']} rendered, "
                        f"{facts['mathErrors']} errors")
    if facts["widgetViews"] and not facts["widgets"]:
        problems.append(f"{facts['widgetViews']} widget(s) with stored state did not render")
    problems += ["console: " + c[:300] for c in console]
    problems += [f"fetches {url} (the site must work offline)" for url in sorted(set(remote))]
    problems += [f"a file it loads is missing: {url}" for url in sorted(set(failed))]
    return problems, facts


def check_search(context, query="retain_graph", expected="lectures/04b_retain_graph_and_hooks.html"):
    """Full-text search from disk: the results of ``query`` include ``expected``."""
    problems, console = [], []
    page = context.new_page()
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    page.goto((SITE / "search.html").as_uri() + f"?q={query}", wait_until="load")
    try:
        page.wait_for_function("() => /Search finished/.test(document.querySelector('#search-results')"
                               "?.innerText || '')", timeout=15_000)
    except Exception:  # playwright's TimeoutError
        problems.append(f"searching for {query!r} did not finish")
    found = page.evaluate("() => [...document.querySelectorAll('#search-results li a')].map(a => a.href)")
    page.close()
    if not found:
        problems.append(f"searching for {query!r} found nothing")
    elif not any(url.split("#")[0].endswith(expected) for url in found):
        problems.append(f"searching for {query!r} did not find {expected}")
    return problems + ["console: " + c[:300] for c in console], len(found)


def broken_links(page_path, links, ids_of):
    """Internal links (file: URLs into the site) whose file or #anchor does not exist."""
    broken = []
    for url in links:
        parts = urlsplit(url)
        if parts.scheme != "file":
            continue
        target = Path(unquote(parts.path))
        if target == page_path.parent or target.is_dir():
            target = target / "index.html"
        if not target.exists():
            broken.append(f"broken link: {url.replace(SITE.as_uri(), '')}")
        elif parts.fragment and target.suffix == ".html" and target.resolve().is_relative_to(SITE.resolve()):
            ids = ids_of.get(target.resolve())
            if ids is not None and unquote(parts.fragment) not in ids:
                broken.append(f"broken anchor: {url.replace(SITE.as_uri(), '')}")
    return broken


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", type=Path)
    args = parser.parse_args()
    if not (SITE / "index.html").exists():
        sys.exit("no site yet in build/site: run make site first")
    if not Path(CHROMIUM).exists():
        sys.exit(f"Chromium not found at {CHROMIUM}: install it with apt-get install chromium")
    from playwright.sync_api import sync_playwright
    pages = [p.resolve() for p in args.pages] or site_pages()
    OUT.mkdir(parents=True, exist_ok=True)
    start = time.time()
    results = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport=PHONE, device_scale_factor=1)
            for path in pages:
                results[path.resolve()] = check_page(context, path)
            search_problems, n_found = check_search(context) if not args.pages else ([], 0)
            context.close()
            for viewport, name in ((PHONE, "index_phone.png"), ({"width": 1280, "height": 800}, "index.png")):
                shot = browser.new_page(viewport=viewport)
                shot.goto((SITE / "index.html").as_uri(), wait_until="load")
                shot.screenshot(path=str(OUT / name))
                shot.close()
        finally:
            browser.close()
    ids_of = {path: set(facts["ids"]) for path, (_, facts) in results.items()}
    failures = 0
    for path, (problems, facts) in results.items():
        problems = problems + sorted(set(broken_links(path, facts["links"], ids_of)))
        name = path.relative_to(SITE.resolve()).as_posix()
        print(f"{name}: {'ok' if not problems else 'FAILED'}, {facts['width']} px wide, "
              f"{facts['typeset']} equation(s), {facts['widgets']} widget element(s)")
        for problem in problems:
            print("    " + problem)
        failures += bool(problems)
    if not args.pages:
        print(f"search for 'retain_graph': {'ok' if not search_problems else 'FAILED'}, {n_found} results")
        for problem in search_problems:
            print("    " + problem)
        failures += bool(search_problems)
    print(f"{len(results) - failures} pages passed, {failures} failed, {time.time() - start:.0f} s "
          f"(screenshots of the landing page in {OUT.relative_to(ROOT)})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
