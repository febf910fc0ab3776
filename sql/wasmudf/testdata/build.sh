#!/usr/bin/env bash
# Builds the example UDF modules from their sources: rust/udf.wasm,
# go/udf.wasm and assemblyscript/udf.wasm (go generate ./sql/wasmudf/ runs
# it). The modules are checked in, so tests need none of the toolchains;
# TestExampleModulesRebuild rebuilds them into a temporary directory (OUT)
# and compares their exports with the checked-in ones.
#
#   bash build.sh [rust] [go] [assemblyscript]   # default: all three
#   OUT=/tmp/x bash build.sh rust                # writes /tmp/x/rust.wasm
#
# Toolchains: Rust with `rustup target add wasm32-unknown-unknown`; Go 1.24
# or newer (//go:wasmexport; TinyGo is not needed); Node.js with npm, which
# installs the pinned AssemblyScript compiler from package-lock.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

dest() {
	if [ -n "${OUT:-}" ]; then echo "$OUT/$1.wasm"; else echo "$here/$1/udf.wasm"; fi
}

build_rust() {
	local target
	target=$(mktemp -d)
	(cd "$here/rust" && CARGO_TARGET_DIR=$target cargo build --quiet --release --target wasm32-unknown-unknown)
	cp "$target/wasm32-unknown-unknown/release/weir_udf_example.wasm" "$(dest rust)"
	rm -rf "$target"
}

build_go() {
	(cd "$here/go" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o "$(dest go)" .)
}

build_assemblyscript() {
	cd "$here/assemblyscript"
	[ -x node_modules/.bin/asc ] || npm ci --no-audit --no-fund --silent
	node_modules/.bin/asc assembly/index.ts -O3 --noAssert --runtime incremental --use abort= -o "$(dest assemblyscript)"
	cd - >/dev/null
}

for lang in "${@:-rust go assemblyscript}"; do
	for l in $lang; do "build_$l"; done
done
