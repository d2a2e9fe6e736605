"""Sphinx configuration of the course website (`make site`, scripts/build_site.py).

The pages are built from the stored, executed notebooks (myst-nb, no execution), with
sphinx-book-theme. Everything a page loads is on disk: MathJax, require.js and the widget
renderer come from the npm copies `make slides` keeps in build/vendor (unpacked next to the
decks in build/site/slides/vendor), so the site works offline, from file:// too.
"""

project = "minigrad"
author = "the minigrad authors"
copyright = "2026, the minigrad authors (MIT)"

extensions = ["myst_nb"]
# build/site-src (written by scripts/build_site.py) holds index.md, a page per chapter and
# the lectures' notebooks; nothing else is a page.
exclude_patterns = ["**/.ipynb_checkpoints"]
master_doc = "index"
language = "en"

# The notebooks are stored executed: show their outputs, never run them.
nb_execution_mode = "off"
nb_merge_streams = True
# Only the solutions are folded (hide-input / hide-cell tags, added by build_site.py).
nb_code_prompt_show = "Show the solution"
nb_code_prompt_hide = "Hide the solution"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "html_image"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # lectures number their sections after the title

# Front-end libraries from npm (see the module docstring). Sphinx puts a relative path under
# _static/, hence the "../slides" to reach the decks' vendor folder.
VENDOR = "../slides/vendor"
mathjax_path = f"{VENDOR}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
mathjax2_config = {
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processRefs": False,
        "processEnvironments": False,
        # myst-nb marks a notebook's page tex2jax_ignore (a "$" in an output is no maths):
        # typeset only what Sphinx marked as maths.
        "ignoreClass": "tex2jax_ignore|mathjax_ignore",
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
    },
}
nb_ipywidgets_js = {
    f"{VENDOR}/requirejs/require.js": {},
    f"{VENDOR}/html-manager/dist/embed-amd.js": {},
}

html_theme = "sphinx_book_theme"
html_title = "minigrad: the course"
html_static_path = ["_static"]
html_css_files = ["minigrad.css"]
html_copy_source = False
# Search results without the snippet under each title: the snippet is fetched from the
# page, which a browser refuses for a site opened from disk (file://).
html_show_search_summary = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "use_download_button": False,  # each lecture links to its own notebook and deck
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "show_navbar_depth": 1,
    "navigation_with_keys": False,
}
html_context = {"default_mode": "light"}
