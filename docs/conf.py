"""Sphinx configuration of the oraclepriv documentation site.

Build (what CI runs; offline: no intersphinx, nothing fetched):

    python3 -m sphinx -W --keep-going -b html docs docs/_build/html

The pages are Markdown (MyST); the API reference under ``api/`` is generated from the numpydoc
docstrings, and numpydoc's validation turns a missing or unknown parameter, or a missing docstring,
of any name the reference shows into a warning, so into a failed build.
"""

from __future__ import annotations

import oraclepriv

project = "oraclepriv"
author = "the oraclepriv authors"
copyright = "the oraclepriv authors"
version = oraclepriv.__version__
release = oraclepriv.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# ---------------------------------------------------------------- MyST (the Markdown pages)
myst_enable_extensions = [
    "amsmath",  # \begin{align} ... blocks in the theory pages
    "colon_fence",  # ::: directives
    "deflist",
    "dollarmath",  # $...$ and $$...$$
    "smartquotes",
]
# links to a section of another page ([text](page.md#section-title)) resolve to the heading's anchor
myst_heading_anchors = 4

# ---------------------------------------------------------------- autodoc and numpydoc
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc Parameters sections give the types; signatures stay short
autodoc_preserve_defaults = True  # show ``time_limit=None``, not the evaluated object's repr
autosummary_generate = False  # the reference pages list their names explicitly
numpydoc_show_class_members = False  # the reference pages list the members they show
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True
# A name the reference shows must have a docstring (GL08) that documents every parameter of its signature
# (PR01), documents no parameter the signature lacks (PR02), and describes each one (PR07).
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "PR07"}
# The protocol classes are structural types, never constructed: their signature is typing.Protocol's
# (*args, **kwargs). Their methods are validated.
numpydoc_validation_exclude = {r"^oraclepriv\.protocols\.(ERMOracle|ConvexERMOracle)$"}

# ---------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = "oraclepriv"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": []}
html_show_sourcelink = False
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True


# ---------------------------------------------------------------- two Markdown idioms of the hand-written pages
# 1. Generated reports live in the repository's results/ folder, outside this source tree; the pages link to
#    them by relative path (../results/README.md). Sphinx cannot build them as pages, so such a link becomes a
#    download: the file is copied into the site and the link points at the copy.
# 2. The theory pages set anchors inside a section with raw HTML (<a id="p1"></a>) and link to them ([P1](#p1)).
#    Each such anchor becomes a docutils target, so the links resolve (and a link to an id no page defines
#    still fails the build).

import os  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

from docutils import nodes  # noqa: E402
from docutils.transforms import Transform  # noqa: E402
from sphinx import addnodes  # noqa: E402

_HTML_ANCHOR = re.compile(r'^\s*<a\s+(?:id|name)="([^"]+)"\s*>\s*(</a>)?\s*$')


def _is_html(node, pattern):
    return isinstance(node, nodes.raw) and "html" in node.get("format", "").split() and re.match(pattern, node.astext())


class HtmlAnchorTargets(Transform):
    """``<a id="name"></a>`` (raw HTML; MyST splits an inline one into ``<a id="name">`` and ``</a>``) becomes
    a target with that id."""

    default_priority = 200

    def apply(self, **kwargs):
        for raw in list(self.document.findall(nodes.raw)):
            match = _HTML_ANCHOR.match(raw.astext()) if _is_html(raw, r".") else None
            if match is None:
                continue
            following = raw.next_node(descend=False, siblings=True)
            if match.group(2) is None and following is not None and _is_html(following, r"^\s*</a>\s*$"):
                following.parent.remove(following)
            if match.group(1) in self.document.ids:  # the section after it already carries this id
                raw.parent.remove(raw)
                continue
            target = nodes.target("", "", ids=[match.group(1)], names=[match.group(1)])
            self.document.note_explicit_target(target, target)
            raw.replace_self(target)


class OutOfTreeLinksAsDownloads(Transform):
    """A Markdown link to a file outside the source tree that exists (a results/ report) becomes a download."""

    default_priority = 210

    def apply(self, **kwargs):
        env = self.document.settings.env
        srcdir = Path(env.srcdir).resolve()
        page_folder = env.doc2path(env.docname).resolve().parent
        for xref in list(self.document.findall(addnodes.pending_xref)):
            if xref.get("reftype") != "myst" or xref.get("refdomain") != "doc" or xref["reftarget"] in env.found_docs:
                continue
            for suffix in env.config.source_suffix:
                path = (srcdir / (xref["reftarget"] + suffix)).resolve()
                if path.is_file() and not path.is_relative_to(srcdir):
                    download = addnodes.download_reference(
                        "", "", refdoc=env.docname, reftarget=os.path.relpath(path, page_folder), refexplicit=True
                    )
                    download.extend(xref.children)
                    xref.replace_self(download)
                    break


def setup(app):
    app.add_transform(HtmlAnchorTargets)
    app.add_transform(OutOfTreeLinksAsDownloads)
    return {"parallel_read_safe": True}
