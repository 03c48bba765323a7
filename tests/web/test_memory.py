"""The Memory page over HTTP against a real ``ecc web``: a memory saved with the CLI is found and
read with its text escaped; the page offers no write."""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import urlencode

from tests.web.conftest import Web


def test_search_and_read_a_memory_escaped(web: Web) -> None:
    subprocess.run(["git", "init", "-q"], cwd=web.root, check=True)
    saved = subprocess.run(
        [sys.executable, "-m", "ecc", "memory", "save", "--title", "Auth <b>tokens</b>",
         "--kind", "decision", "--stdin", "--json"],
        input="Short-lived <script>alert(1)</script> tokens.\n",
        cwd=web.root, env=web.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert saved.returncode == 0, saved.stderr
    memory_id = json.loads(saved.stdout)["memory"]["id"]
    cookie = web.sign_in()
    query = urlencode({"repo": str(web.root), "q": "auth tokens"})
    found = web.request("GET", f"/web/memory?{query}", cookie=cookie)
    assert found.status == 200 and "Auth &lt;b&gt;tokens&lt;/b&gt;" in found.text
    assert memory_id in found.text and "<b>tokens" not in found.text
    read = web.request(
        "GET", f"/web/memory?{urlencode({'repo': str(web.root), 'id': memory_id})}", cookie=cookie
    )
    assert "Short-lived &lt;script&gt;alert(1)&lt;/script&gt; tokens." in read.text
    assert "<script>alert" not in read.text and 'method="post" action="/web/memory' not in read.text
    outside = web.request("GET", f"/web/memory?{urlencode({'repo': '/etc', 'q': 'x'})}",
                          cookie=cookie)  # fmt: skip
    assert outside.status == 200 and "/etc" not in outside.text.split("<main", 1)[1]
