"""Open every chapter in JupyterLab in headless Chromium and check it as a learner sees it.

For each notebook: Run All Cells, wait for the kernel, then fail on any error or stderr
output in the page, on any console error of the page, and on widgets that do not render or
do not react to a click or a key press. A screenshot per chapter (and per widget) goes to
build/browser/. Uses Debian's Chromium through the Python `playwright` package (never
`playwright install`). Every process it starts is stopped.

    python scripts/browser_check.py [--jobs N] [notebooks/NN_name.ipynb ...]
    python scripts/browser_check.py --decks-only [notebooks/NN_name.ipynb ...]  # after make slides

With ``--jobs N`` (default: one per core, at most 2) the notebooks, then the decks, are dealt
out to N processes, each with its own JupyterLab and Chromium: a notebook's kernel uses one
core, so two run side by side in about half the time.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "browser"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync",
                 "--disable-quic", "--disable-dev-shm-usage"]
# Console noise that says nothing about the course: the offline machine refusing fetches.
IGNORED_CONSOLE = ("Failed to load resource", "net::ERR_", "favicon", "Could not load file")
LOCAL_URLS = ("file:", "data:", "blob:", "about:")
FRAME_HEIGHT = 800  # the decks' reveal_height (scripts/build_slides.py)
# Height of the slide on screen, fragments included, and how many cells it shows (a slide of
# one tall cell scrolls; one of several cells should be split).
SLIDE_SIZE = """() => { const s = [...document.querySelectorAll('.reveal .slides section.present')].pop();
    return [s.scrollHeight, [...s.querySelectorAll('.jp-Cell')].filter(c => !c.closest('aside')).length]; }"""

# Shows slide (h, v) through the URL, as a presenter's browser does, and resolves once it is
# the present slide, MathJax has re-typeset it and its height has held for 100 ms: the deck
# re-typesets a slide's maths when it is shown ("End Rerender"), and measured before that, a
# slide with equations can be 40 px shorter than it shows (01b's dual-number table: 809 px,
# then 852 px).
SHOW_SLIDE = """([h, v]) => new Promise(done => {
    const hub = window.MathJax && MathJax.Hub;
    if (hub && window.rerenders === undefined) {
        window.rerenders = 0;
        hub.Register.MessageHook("End Rerender", () => { window.rerenders += 1; });
    }
    const target = () => { const top = document.querySelectorAll('.reveal .slides > section')[h];
        const inner = top && top.querySelectorAll(':scope > section');
        return inner && inner.length ? inner[v] : top; };
    const shown = () => !!target() && target().classList.contains('present');
    const before = window.rerenders, changes = !shown();
    const until = Date.now() + 5000;
    let height = -1, since = Date.now();
    const wait = () => {
        const now = Date.now();
        const typeset = !hub || !changes || window.rerenders > before;
        if (!shown() || !typeset || (hub && hub.queue.pending)) since = now;
        else if (target().scrollHeight !== height) { height = target().scrollHeight; since = now; }
        if (now - since >= 100 || now > until) done(true); else setTimeout(wait, 25);
    };
    location.hash = `#/${h}/${v}`;
    wait();
})"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def user_settings(folder):
    """JupyterLab settings: render every cell (no virtual scrolling), no news pop-up, and no
    autosave: the check clears and re-runs the notebooks, which must not reach the disk."""
    settings = {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
            {"fetchNews": "false", "checkForUpdates": False},
    }
    for name, value in settings.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


class Lab:
    """A JupyterLab server on localhost, stopped on exit."""

    def __init__(self, tmp):
        self.port, self.token = free_port(), "minigrad-browser-check"
        settings = Path(tmp) / "settings"
        user_settings(settings)
        env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings),
                   JUPYTERLAB_WORKSPACES_DIR=str(Path(tmp) / "workspaces"),
                   JUPYTER_RUNTIME_DIR=str(Path(tmp) / "runtime"))
        command = [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser",
                   f"--port={self.port}", "--ip=127.0.0.1", f"--IdentityProvider.token={self.token}",
                   f"--ServerApp.root_dir={ROOT}", "--ServerApp.open_browser=False"]
        if os.geteuid() == 0:
            command.append("--allow-root")
        self.log = open(Path(tmp) / "lab.log", "w")
        self.process = subprocess.Popen(command, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self, timeout=60):
        url = f"http://127.0.0.1:{self.port}/api/status?token={self.token}"
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                urllib.request.urlopen(url, timeout=2)
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("JupyterLab did not start; see its log")

    def url(self, notebook):
        # reset: a fresh workspace, so only this notebook is open
        return (f"http://127.0.0.1:{self.port}/lab/tree/{notebook.relative_to(ROOT).as_posix()}"
                f"?reset&token={self.token}")

    def shutdown_kernels(self):
        """Stop the kernels a notebook started, so they do not pile up over the chapters."""
        base = f"http://127.0.0.1:{self.port}/api/kernels"
        headers = {"Authorization": f"token {self.token}"}
        with urllib.request.urlopen(urllib.request.Request(base, headers=headers), timeout=10) as r:
            kernels = json.load(r)
        for kernel in kernels:
            request = urllib.request.Request(f"{base}/{kernel['id']}", method="DELETE", headers=headers)
            urllib.request.urlopen(request, timeout=30).close()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def accept_kernel_dialog(page):
    """JupyterLab sometimes asks which kernel to start: take the proposed one (python3)."""
    dialog = page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept")
    if dialog.count():
        dialog.first.click()
        page.wait_for_timeout(500)


def menu_command(page, menu, command):
    page.click(f".lm-MenuBar-itemLabel:text-is('{menu}')", timeout=20_000)
    page.click(f"li[data-command='{command}']", timeout=10_000)


def run_all(page):
    """Clear the stored outputs first, so that an execution count proves a cell ran now."""
    menu_command(page, "Edit", "editmenu:clear-all")
    menu_command(page, "Run", "runmenu:run-all")


def wait_for_kernel(page, timeout=240):
    """Until every code cell shows an execution count and the kernel is idle."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        accept_kernel_dialog(page)
        busy = page.evaluate(r"""() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
            const done = prompts.every(p => /\[\d+\]/.test(p.textContent));
            const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
            const idle = !status || status.getAttribute('data-status') === 'idle';
            return !(done && idle);
        }""")
        if not busy:
            return
        time.sleep(1)
    stuck = page.evaluate("""() => [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
        .map((p, i) => i + ':' + p.textContent).filter(t => !/\\[\\d+\\]/.test(t))""")
    raise TimeoutError(f"the notebook was still running after {timeout} s; cells without a "
                       f"count: {stuck[:10]}")


def check_notebook(browser, lab, notebook):
    problems, console = [], []
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    page.goto(lab.url(notebook))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_timeout(1000)
    accept_kernel_dialog(page)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    run_all(page)
    accept_kernel_dialog(page)
    wait_for_kernel(page)
    page.wait_for_timeout(1500)  # widgets render after the kernel goes idle
    page.evaluate("() => document.querySelectorAll('.jp-WindowedPanel-outer')"
                  ".forEach(e => e.scrollTo(0, 0))")  # the screenshot shows the chapter's start

    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    for i in range(errors.count()):
        problems.append("error/stderr output: " + errors.nth(i).inner_text()[:300])
    widgets = page.locator(".jp-OutputArea-output .jupyter-widgets.widget-vbox")
    n_widgets = widgets.count()
    shots = [OUT / f"{notebook.stem}.png"]
    page.screenshot(path=str(shots[0]))
    for i in range(n_widgets):
        widget = widgets.nth(i)
        widget.scroll_into_view_if_needed()
        before = widget.inner_html()
        buttons = widget.locator("button")
        sliders = widget.locator(".widget-slider .slider-container, .widget-slider .noUi-handle")
        checkboxes = widget.locator("input[type='checkbox']")
        primary = widget.locator("button.mod-primary")
        if primary.count():
            primary.first.click()
        elif buttons.count():
            buttons.first.click()
        elif sliders.count():
            sliders.first.click()
            page.keyboard.press("ArrowRight")
        elif checkboxes.count():
            checkboxes.first.click()
        for _ in range(40):  # up to 10 s: a busy machine redraws slowly
            page.wait_for_timeout(250)
            if widget.inner_html() != before:
                break
        else:
            problems.append(f"widget {i + 1} did not react to a click or key press")
        page.wait_for_timeout(1000)  # let the redraw finish before the screenshot
        shot = OUT / f"{notebook.stem}_widget{i + 1}.png"
        widget.screenshot(path=str(shot))
        shots.append(shot)
    if n_widgets == 0 and page.locator(".jp-OutputArea-output .jupyter-widgets").count():
        problems.append("widgets rendered without their layout box")
    unrendered = page.locator("text=Error displaying widget").count() + \
        page.locator("text=Loading widget...").count()
    if unrendered:
        problems.append(f"{unrendered} widget(s) did not render")
    problems += ["console: " + c[:300] for c in console if not c.startswith(IGNORED_CONSOLE)]
    context.close()
    return problems, shots, n_widgets


def is_blank(png_path):
    """A screenshot in one colour: nothing was drawn."""
    from PIL import Image
    with Image.open(png_path) as image:
        return image.convert("RGB").getcolors(maxcolors=1) is not None


def check_deck(browser, deck):
    """Visit every slide of a static deck; a slide that renders as one colour fails."""
    problems, console, remote = [], [], []
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith(LOCAL_URLS) else remote.append(r.url))
    page.goto(deck.as_uri())
    page.wait_for_function("() => document.querySelector('.reveal .slides section.present')",
                           timeout=30_000)
    # (h, v) of every slide, read from the sections; visited through the URL, as a presenter's
    # browser does (a second reveal.js instance fetched with require.js renders maths twice)
    slides = page.evaluate("""() => [...document.querySelectorAll('.reveal .slides > section')]
        .flatMap((top, h) => { const inner = top.querySelectorAll(':scope > section');
                               return inner.length ? [...inner].map((_, v) => [h, v]) : [[h, 0]]; })""")
    shot = OUT / f"deck_{deck.stem.replace('.slides', '')}.png"
    for k, (h, v) in enumerate(slides):
        page.evaluate(SHOW_SLIDE, [h, v])
        height, cells = page.evaluate(SLIDE_SIZE)
        if height > FRAME_HEIGHT + 40 and cells > 1:
            problems.append(f"slide {k + 1} (#/{h}/{v}) is {height}px tall for a {FRAME_HEIGHT}px "
                            "frame: start a subslide at one of its later cells")
        elif height > FRAME_HEIGHT + 40 and k == 0:
            problems.append(f"the title slide is {height}px tall for a {FRAME_HEIGHT}px frame: its "
                            "last lines (the stated time) are cut off; shorten it")
        path = shot if k == 0 else OUT / f"deck_{deck.stem}_current.png"
        page.screenshot(path=str(path))
        if is_blank(path):
            blank = OUT / f"deck_{deck.stem}_blank_{k + 1}.png"
            path.replace(blank)
            problems.append(f"slide {k + 1} is blank (see {blank.name})")
    (OUT / f"deck_{deck.stem}_current.png").unlink(missing_ok=True)
    problems += ["console: " + c[:300] for c in console if not c.startswith(IGNORED_CONSOLE)]
    problems += [f"fetches {url} (a deck must work offline)" for url in sorted(set(remote))]
    page.close()
    return problems, len(slides), shot


def check_decks(browser, decks):
    """Check each deck, print one line per deck and its problems; the number that failed."""
    failures = 0
    for deck in decks:
        problems, n_slides, shot = check_deck(browser, deck)
        print(f"{deck.name}: {'ok' if not problems else 'FAILED'}, {n_slides} slides, "
              f"screenshot: {shot.name}")
        for problem in problems:
            print("    " + problem)
        failures += bool(problems)
    return failures


def check_decks_only(notebooks):
    """The decks of ``notebooks`` alone, without JupyterLab (a minute instead of five)."""
    from playwright.sync_api import sync_playwright
    decks = [ROOT / "build" / "slides" / f"{nb.stem}.slides.html" for nb in notebooks]
    missing = [d.name for d in decks if not d.exists()]
    if missing:
        sys.exit(f"no deck yet for {', '.join(missing)}: run make slides first")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            failures = check_decks(browser, decks)
        finally:
            browser.close()
    print(f"{len(decks) - failures} passed, {failures} failed")
    return 1 if failures else 0


def snapshot(paths):
    return {p: p.stat().st_mtime_ns for p in paths}


def run_workers(shares, *flags):
    """Copies of this script, one per non-empty share of notebooks, run side by side; their
    reports printed one after another, whole. True when every one passed."""
    workers = [subprocess.Popen([sys.executable, __file__, "--jobs", "1", *flags,
                                 *map(str, share)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for share in shares if share]
    passed = True
    for worker in workers:
        out, _ = worker.communicate()
        print(out, end="", flush=True)
        passed &= worker.returncode == 0
    return passed


def check_in_parallel(notebooks, jobs, decks):
    """``notebooks`` dealt out to ``jobs`` processes, then (with ``decks``) every deck of
    build/slides dealt out the same way; 0 when all passed."""
    passed = run_workers([notebooks[k::jobs] for k in range(jobs)])
    if decks:
        stems = [d.name.removesuffix(".slides.html")
                 for d in sorted((ROOT / "build" / "slides").glob("*.slides.html"))]
        with_deck = [ROOT / "notebooks" / f"{stem}.ipynb" for stem in stems]
        passed &= run_workers([with_deck[k::jobs] for k in range(jobs)], "--decks-only")
    print("browser check: " + (f"{len(notebooks)} notebooks" + (" and their decks" if decks else "")
                               + f" in {jobs} processes passed" if passed else
                               "FAILED (see above)"))
    return 0 if passed else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="processes that check notebooks side by side (default: %(default)s)")
    parser.add_argument("--decks", action="store_true",
                        help="also check the static decks in build/slides (make slides first)")
    parser.add_argument("--decks-only", action="store_true",
                        help="check only the decks in build/slides of the notebooks given (all "
                             "without any): slide heights, blank slides, offline")
    args = parser.parse_args()
    notebooks = [p.resolve() for p in args.notebooks] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not Path(CHROMIUM).exists():
        sys.exit(f"Chromium not found at {CHROMIUM}: install it with apt-get install chromium")
    from playwright.sync_api import sync_playwright
    OUT.mkdir(parents=True, exist_ok=True)
    failures = checked = 0
    if args.decks_only:
        return check_decks_only(notebooks)
    if args.jobs > 1 and len(notebooks) > 1:
        return check_in_parallel(notebooks, args.jobs, args.decks)
    before = snapshot(notebooks)
    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(tmp)
        try:
            lab.wait()
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                            headless=True)
                try:
                    for notebook in notebooks:
                        problems, shots, n_widgets = check_notebook(browser, lab, notebook)
                        lab.shutdown_kernels()
                        status = "ok" if not problems else "FAILED"
                        print(f"{notebook.name}: {status}, {n_widgets} widget(s), "
                              f"screenshots: {', '.join(s.name for s in shots)}")
                        for problem in problems:
                            print("    " + problem)
                        failures += bool(problems)
                    decks = sorted((ROOT / "build" / "slides").glob("*.slides.html")) if args.decks else []
                    failures += check_decks(browser, decks)
                    checked = len(notebooks) + len(decks)
                finally:
                    browser.close()
        finally:
            lab.stop()
    if snapshot(notebooks) != before:
        print("FAILED: the browser session wrote to the notebooks (autosave?)")
        failures += 1
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
