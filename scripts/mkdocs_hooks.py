"""MkDocs hooks for the docs site (mkdocs.yml).

The pages link to files of the repository outside docs/ (examples, benchmark
results) with relative links, which work where the repository is browsed but
name nothing on the site. Each such link is checked here (its file must exist
in the repository, else the strict build fails) and shown on the site as the
file's repository path in code formatting.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.repo_links")

# a Markdown link whose target climbs out of docs/: [text](../path#anchor)
_LINK = re.compile(r"\[(?P<text>[^\]\n]+)\]\((?P<target>\.\./[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    repo = docs.parent
    here = (docs / page.file.src_uri).parent

    def shown(match: re.Match[str]) -> str:
        target = (here / match["target"]).resolve()
        if not target.is_relative_to(repo) or target.is_relative_to(docs):
            return match[0]  # not a repository file outside docs/: MkDocs checks it
        path = target.relative_to(repo).as_posix()
        if not target.exists():
            log.warning("Doc file '%s' links to '%s', which is not in the repository.",
                        page.file.src_uri, path)
            return match[0]
        text = match["text"]
        if text.strip("`") == path:
            return f"`{path}`"
        return f"{text} (`{path}`)"

    return _LINK.sub(shown, markdown)
