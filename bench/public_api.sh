#!/usr/bin/env bash
# Lists the public API of the `strata` crate, one declaration per line, from its rustdoc
# pages, so that two builds can be diffed (a restructuring must not change it):
#   bench/public_api.sh OUT_FILE
# Every item page's declaration and every method, field and variant header is kept; links to
# source files (which move in a restructuring) are not.
set -euo pipefail
out=${1:?usage: bench/public_api.sh OUT_FILE}
cargo doc -q --no-deps -p strata
doc="${CARGO_TARGET_DIR:-target}/doc/strata"
python3 - "$doc" > "$out" <<'PY'
import html, pathlib, re, sys
root = pathlib.Path(sys.argv[1])
lines = set()
for page in sorted(root.rglob("*.html")):
    name = page.name
    if name in ("index.html", "all.html", "sidebar-items.js") or "/src/" in str(page):
        continue
    text = page.read_text(errors="replace")
    path = str(page.relative_to(root))
    blocks = re.findall(r'<pre class="rust item-decl"><code>(.*?)</code></pre>', text, re.S)
    blocks += re.findall(r'<h4 class="code-header">(.*?)</h4>', text, re.S)
    blocks += re.findall(r'<span id="(?:structfield|variant)\.[^"]*" class="[^"]*"><a[^>]*>§</a><code>(.*?)</code>', text, re.S)
    for block in blocks:
        plain = html.unescape(re.sub(r"<[^>]+>", "", block))
        plain = " ".join(plain.split())
        lines.add(f"{path}: {plain}")
print("\n".join(sorted(lines)))
PY
echo "$(wc -l < "$out") public declarations in $out"
