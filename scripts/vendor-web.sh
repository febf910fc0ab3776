#!/usr/bin/env bash
# vendor-web.sh - re-fetch the dashboard's one third-party file, Chart.js,
# at the pinned version from the npm registry (`npm pack`), and copy its
# browser build and LICENSE into rest/web/static/vendor/. The result is
# committed: `go build` embeds it and never needs npm.
#
#   scripts/vendor-web.sh            (or: make vendor-web)
#
# To move to another version, change CHARTJS_VERSION, run this, look at the
# dashboard, and commit the vendor directory with the script.
set -euo pipefail

CHARTJS_VERSION=4.6.1

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/rest/web/static/vendor"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

command -v npm >/dev/null || { echo "vendor-web: npm is needed (apt-get install npm)" >&2; exit 1; }
(cd "$tmp" && npm pack --silent "chart.js@$CHARTJS_VERSION" >/dev/null)
tar -xzf "$tmp/chart.js-$CHARTJS_VERSION.tgz" -C "$tmp"
mkdir -p "$dest"
cp "$tmp/package/dist/chart.umd.min.js" "$dest/chart.umd.min.js"
cp "$tmp/package/LICENSE.md" "$dest/chart.js-LICENSE.md"
echo "chart.js $CHARTJS_VERSION" >"$dest/VERSIONS"
echo "vendor-web: chart.js $CHARTJS_VERSION -> ${dest#"$root"/}"
