"""``make site``: the course as a static website in build/site/, from the stored notebooks.

Sphinx + myst-nb + sphinx-book-theme, offline: the notebooks are not executed (their stored
outputs are shown), and MathJax, require.js and the widget renderer are the npm copies that
``make slides`` caches in build/vendor/ (scripts/build_slides.py; npm runs only when that
cache is empty). Sources are in site/ (conf.py, index.md, toc.yml); this script writes a
preprocessed copy under build/site-src/ and never touches notebooks/:

- speaker notes (``slideshow.slide_type == "notes"``) get the ``remove-cell`` tag;
- solutions (collapsed in the notebooks: ``jupyter.source_hidden``) get ``hide-input``,
  or ``hide-cell`` when they have an output, so the answer is folded too;
- a line under each lecture's title links to its deck and to the notebook to download;
- a line under each widget says it comes alive in JupyterLab.

The decks (built here for the notebooks that have none or a stale one) are copied to
build/site/slides/ and the notebooks to build/site/notebooks/, so build/site/ is complete.

    python scripts/build_site.py
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_slides  # noqa: E402  (the decks and their npm cache)

ROOT = build_slides.ROOT
SITE_SOURCES = ROOT / "site"
SRC = ROOT / "build" / "site-src"
OUT = ROOT / "build" / "site"
DECKS = build_slides.DECKS
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
README_ROW = re.compile(r"^\| *(\d\d[a-z]?) *\| *\[([^\]]+)\]\(notebooks/([^)]+)\.ipynb\) *\| *([^|]*)\| *([^|]*)\|")


def readme_lectures():
    """The course table of README.md: [(stem, short title, minutes · slides, what it shows)]."""
    rows = []
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        match = README_ROW.match(line)
        if match:
            rows.append((match[3], match[2].strip(), match[4].strip(), match[5].strip()))
    return rows


def read_toc():
    chapters = yaml.safe_load((SITE_SOURCES / "toc.yml").read_text(encoding="utf-8"))["chapters"]
    in_toc = [stem for chapter in chapters for stem in chapter["lectures"]]
    in_readme = [row[0] for row in readme_lectures()]
    on_disk = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    if in_toc != in_readme or sorted(in_toc) != on_disk:
        sys.exit("site/toc.yml, the README's course table and notebooks/ disagree:\n"
                 f"  toc.yml:    {in_toc}\n  README:     {in_readme}\n  notebooks/: {on_disk}")
    return chapters


def tag(cell, name):
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if name not in tags:
        tags.append(name)


def markdown_cell(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def lecture_number(stem):
    """"01a" for 01a_derivatives_by_hand, "00" for 00_welcome."""
    return re.match(r"\d\d[a-z]?", stem)[0]


def links_line(stem, chapter, position):
    """Under the title: where the lecture sits, and its deck and notebook (relative links,
    raw HTML so that Sphinx leaves them alone: the files are copied in after the build)."""
    part = f"part {position + 1} of {len(chapter['lectures'])} of " if len(chapter["lectures"]) > 1 else ""
    return (f'<p class="minigrad-links">Lecture {lecture_number(stem)}, {part}chapter {chapter["number"]} · '
            f'<a href="../slides/{stem}.slides.html">the slides</a> · '
            f'<a href="../notebooks/{stem}.ipynb" download>download the notebook</a> '
            f'(run it with <code>make lab</code>)</p>')


WIDGET_NOTE = ('<p class="minigrad-widget-note"><em>A widget, shown here with its stored state: it '
               'comes alive in JupyterLab (<code>make lab</code>), where a running kernel redraws '
               'it as you move it.</em></p>')


def preprocess(notebook, chapter, position):
    """The copy of one notebook the site is built from (see the module docstring)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    cells = []
    for i, cell in enumerate(nb["cells"]):
        meta = cell.get("metadata", {})
        if meta.get("slideshow", {}).get("slide_type") == "notes":
            tag(cell, "remove-cell")
        elif cell["cell_type"] == "code" and meta.get("jupyter", {}).get("source_hidden"):
            tag(cell, "hide-cell" if cell.get("outputs") else "hide-input")
        cells.append(cell)
        if i == 0:
            cells.append(markdown_cell(links_line(notebook.stem, chapter, position)))
        if any(WIDGET_VIEW in out.get("data", {}) for out in cell.get("outputs", [])):
            cells.append(markdown_cell(WIDGET_NOTE))
    nb["cells"] = cells
    for cell in cells:  # nbformat 4.5 wants ids; the added cells get fresh ones
        cell.setdefault("id", f"site-{cells.index(cell)}")
    return nb


def chapter_page(chapter, rows):
    lines = [f"# {chapter['number']} · {chapter['title']}", "",
             f"Chapter {int(chapter['number'])} comes in {len(chapter['lectures'])} lectures:", ""]
    for stem in chapter["lectures"]:
        _, title, minutes, what = rows[stem]
        lines.append(f"- [{stem} · {title}](../lectures/{stem}.ipynb) ({minutes.replace('·', 'minutes ·')} "
                     f"slides): {what}")
    lines += ["", "```{toctree}", ":hidden:", ""] + [f"../lectures/{s}" for s in chapter["lectures"]] + ["```", ""]
    return "\n".join(lines)


def index_page(chapters, rows):
    text = (SITE_SOURCES / "index.md").read_text(encoding="utf-8").rstrip() + "\n\n## The lectures\n\n"
    text += "| | lecture | minutes · slides | what it shows |\n|---|---|---|---|\n"
    for chapter in chapters:
        for stem in chapter["lectures"]:
            _, title, minutes, what = rows[stem]
            text += f"| {lecture_number(stem)} | [{title}](lectures/{stem}.ipynb) | {minutes} | {what} |\n"
    entries = [f"lectures/{c['lectures'][0]}" if len(c["lectures"]) == 1 else f"chapters/{c['number']}"
               for c in chapters]
    text += "\n```{toctree}\n:hidden:\n:caption: The course\n\n" + "\n".join(entries) + "\n```\n"
    return text


def write_sources(chapters):
    rows = {row[0]: row for row in readme_lectures()}
    if SRC.exists():
        shutil.rmtree(SRC)
    (SRC / "lectures").mkdir(parents=True)
    (SRC / "chapters").mkdir()
    (SRC / "index.md").write_text(index_page(chapters, rows), encoding="utf-8")
    for chapter in chapters:
        if len(chapter["lectures"]) > 1:
            (SRC / "chapters" / f"{chapter['number']}.md").write_text(chapter_page(chapter, rows), encoding="utf-8")
        for position, stem in enumerate(chapter["lectures"]):
            nb = preprocess(ROOT / "notebooks" / f"{stem}.ipynb", chapter, position)
            (SRC / "lectures" / f"{stem}.ipynb").write_text(json.dumps(nb, indent=1, ensure_ascii=False),
                                                           encoding="utf-8")


def decks_up_to_date(stems):
    """Build the decks that are missing or older than their notebook (make slides builds all)."""
    if not all(build_slides.cached_tarball(spec).exists() for spec in build_slides.PACKAGES):
        subprocess.run([str(ROOT / "scripts" / "system_packages.sh"), "npm"], check=True)  # once
    build_slides.fetch_vendor()
    inputs = [Path(build_slides.__file__)] + list((ROOT / "scripts" / "slides_template").rglob("*"))
    newest_input = max(p.stat().st_mtime for p in inputs)
    built = 0
    for stem in stems:
        notebook, deck = ROOT / "notebooks" / f"{stem}.ipynb", DECKS / f"{stem}.slides.html"
        if not deck.exists() or deck.stat().st_mtime < max(notebook.stat().st_mtime, newest_input):
            _, online = build_slides.build_deck(notebook)
            if online:
                sys.exit(f"{deck.name} still loads {', '.join(online)}")
            built += 1
    build_slides.write_index([ROOT / "notebooks" / f"{s}.ipynb" for s in stems])
    return built


def copy_tree(source, target):
    """Hard links where the file system allows (the vendor folder is ~100 MB), else copies."""
    def link(src, dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    shutil.copytree(source, target, copy_function=link, dirs_exist_ok=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", default="2", help="sphinx-build -j (default 2)")
    args = parser.parse_args()
    start = time.time()
    chapters = read_toc()
    stems = [s for c in chapters for s in c["lectures"]]
    built = decks_up_to_date(stems)
    write_sources(chapters)
    if OUT.exists():
        shutil.rmtree(OUT)
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", args.jobs, "-W", "--keep-going",
               "-c", str(SITE_SOURCES), "-d", str(ROOT / "build" / "site-doctrees"), str(SRC), str(OUT)]
    if subprocess.run(command).returncode:
        sys.exit("sphinx-build failed (warnings count as errors): see above")
    solutions = sum(json.dumps(c.get("metadata", {})).count('"source_hidden": true')
                    for stem in stems for c in json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())["cells"])
    folded = sum(p.read_text(encoding="utf-8").count("Show the solution") for p in (OUT / "lectures").glob("*.html"))
    if folded != solutions:
        sys.exit(f"{solutions} solutions in the notebooks but {folded} folded on the site")
    (OUT / "slides").mkdir()
    for name in [f"{stem}.slides.html" for stem in stems] + ["index.html"]:
        shutil.copy2(DECKS / name, OUT / "slides")
    copy_tree(DECKS / "vendor", OUT / "slides" / "vendor")
    (OUT / "notebooks").mkdir()
    for stem in stems:
        shutil.copy2(ROOT / "notebooks" / f"{stem}.ipynb", OUT / "notebooks")
    pages = sum(1 for p in OUT.rglob("*.html") if p.relative_to(OUT).parts[0] not in ("slides", "_static"))
    print(f"{(OUT / 'index.html').relative_to(ROOT)}: {pages} pages ({len(stems)} lectures), "
          f"{built} deck(s) rebuilt, {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
