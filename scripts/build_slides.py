"""``make slides``: one reveal.js deck per chapter, plus an index page, that work offline.

nbconvert's decks load reveal.js, require.js, jQuery, MathJax, Font Awesome and the widget
renderer from CDNs. Here they come from the npm registry at build time (``npm pack``, cached
in build/vendor/) and are unpacked next to the decks, so a deck opened from disk with no
network shows its slides, its maths and its speaker notes (press S). Cells tagged
``deep-dive`` (optional internals, read in the notebook) are left out of the deck; a cell
tagged ``picture-only-in-deck`` shows only its output there (its plotting code would push the
picture off the slide).

    python scripts/build_slides.py [notebooks/NN_name.ipynb ...]
"""

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
DECKS = BUILD / "slides"
CACHE = BUILD / "vendor"

# npm package -> folder name under slides/vendor/. reveal.js 4.x: nbconvert's template gives a
# blank page with 6.x.
PACKAGES = {
    "reveal.js@4.6.0": "reveal.js",
    "requirejs@2.3.7": "requirejs",
    "jquery@3.7.1": "jquery",
    "mathjax@2.7.9": "mathjax",
    "font-awesome@4.7.0": "font-awesome",
    "@jupyter-widgets/html-manager@1.0.15": "html-manager",
}
URLS = {
    "reveal_url_prefix": "vendor/reveal.js",
    "require_js_url": "vendor/requirejs/require.js",
    "jquery_url": "vendor/jquery/dist/jquery.min.js",
    "mathjax_url": "vendor/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
    "font_awesome_url": "vendor/font-awesome/css/font-awesome.min.css",
    "widget_renderer_url": "vendor/html-manager/dist/embed-amd.js",
}


def cached_tarball(spec):
    """Where the npm package ``spec`` (name@version) is cached."""
    name, version = spec.rsplit("@", 1)
    return CACHE / f"{name.replace('@', '').replace('/', '-')}-{version}.tgz"


def fetch_vendor():
    """Download (once) and unpack the front-end packages the decks load."""
    CACHE.mkdir(parents=True, exist_ok=True)
    target = DECKS / "vendor"
    target.mkdir(parents=True, exist_ok=True)
    for spec, folder in PACKAGES.items():
        tarball = cached_tarball(spec)
        if not tarball.exists():
            if shutil.which("npm") is None:
                sys.exit("npm is needed once to fetch reveal.js and friends: "
                         "apt-get install npm (or install Node.js), then run make slides again")
            out = subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", str(CACHE)],
                                 check=True, capture_output=True, text=True).stdout.strip().splitlines()
            (CACHE / out[-1]).rename(tarball)
        destination = target / folder
        if not destination.exists():
            with tarfile.open(tarball) as archive:
                archive.extractall(target / f".{folder}", filter="data")
            (target / f".{folder}" / "package").rename(destination)
            shutil.rmtree(target / f".{folder}")
    for css in (target / "reveal.js" / "dist" / "theme").glob("*.css"):
        _drop_remote_imports(css)


def _drop_remote_imports(css):
    """reveal.js themes @import their fonts from Google: offline the browser falls back to
    the next font in the list anyway, so drop the request instead of letting it fail."""
    text = css.read_text(encoding="utf-8")
    kept = re.sub(r"@import\s+url\(\s*[\"']?https?://[^)]*\)\s*;\s*", "", text)
    if kept != text:
        css.write_text(kept, encoding="utf-8")


def build_deck(notebook):
    args = [sys.executable, "-m", "nbconvert", "--to", "slides", str(notebook),
            f"--TemplateExporter.extra_template_basedirs={ROOT / 'scripts' / 'slides_template'}",
            "--template=minigrad",
            "--output-dir", str(DECKS), "--SlidesExporter.reveal_theme=simple",
            "--SlidesExporter.reveal_transition=none", "--SlidesExporter.reveal_width=1280",
            "--SlidesExporter.reveal_height=800",
            "--TagRemovePreprocessor.enabled=True", "--TagRemovePreprocessor.remove_cell_tags=deep-dive",
            "--TagRemovePreprocessor.remove_input_tags=picture-only-in-deck"]
    args += [f"--SlidesExporter.{key}={value}" for key, value in URLS.items()]
    subprocess.run(args, check=True, capture_output=True)
    deck = DECKS / f"{notebook.stem}.slides.html"
    text = deck.read_text(encoding="utf-8")
    if 'class="mermaid"' not in text:  # no diagrams: drop the CDN import that renders them
        text = re.sub(r'<script type="module">\s*import mermaid from [^<]*</script>', "", text)
        deck.write_text(text, encoding="utf-8")
    left = sorted(set(re.findall(r"https?://[^\s\"'<>)]+", text)))
    return deck, [u for u in left if _loads_from_network(u, text)]


def _loads_from_network(url, text):
    """A URL the page would fetch by itself (a script, stylesheet, image or import), not a
    link the reader may click."""
    u = re.escape(url)
    return bool(re.search(r"<(script|img|iframe|source)\b[^>]*\bsrc=[\"']" + u, text)
                or re.search(r"<link\b[^>]*\bhref=[\"']" + u, text)
                or re.search(r"(@import\s+url\(|import\b[^;]*\bfrom\s+)[\"']?" + u, text))


def title_of(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return notebook.stem


def write_index(notebooks):
    rows = "\n".join(
        f'<li><a href="{nb.stem}.slides.html">{html.escape(title_of(nb))}</a></li>' for nb in notebooks)
    (DECKS / "index.html").write_text(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>minigrad: slides</title>
<style>body {{ font-family: sans-serif; max-width: 46em; margin: 3em auto; font-size: 1.2em; }}
li {{ margin: 0.4em 0; }}</style></head>
<body><h1>minigrad — the course as slides</h1>
<p>Arrow keys move between slides, <b>S</b> opens the speaker notes, <b>F</b> goes full screen.</p>
<ol>
{rows}
</ol></body></html>
""", encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args()
    notebooks = [p.resolve() for p in args.notebooks] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    fetch_vendor()
    if not args.notebooks:  # a whole build: drop the decks of notebooks renamed or split since
        for old in set(DECKS.glob("*.slides.html")) - {DECKS / f"{nb.stem}.slides.html" for nb in notebooks}:
            old.unlink()
    problems = 0
    for notebook in notebooks:
        deck, online = build_deck(notebook)
        print(f"{deck.relative_to(ROOT)}" + (f"  (still loads: {', '.join(online)})" if online else ""))
        problems += bool(online)
    write_index(notebooks)
    print(f"{(DECKS / 'index.html').relative_to(ROOT)}: {len(notebooks)} decks")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
