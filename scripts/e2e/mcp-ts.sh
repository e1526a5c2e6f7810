#!/usr/bin/env bash
# `trtbuild mcp` driven by an independent MCP client, the TypeScript SDK
# (@modelcontextprotocol/sdk from npm, pinned with its lockfile in
# internal/mcptools/testdata/tsclient): tools/list, a simulated build's progress notifications,
# a build cancelled through an AbortSignal (notifications/cancelled) that ends cancelled with no
# engine, and a 2 s time budget that ends a slow build timed_out. The packages are installed in
# a temporary folder outside the repository (npm ci, from the npm registry or its cache).
# Skips with a message without node and npm (fails under CI=true, where they must be).
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in node npm; do
	if ! command -v "$tool" >/dev/null; then
		if [ -n "${CI:-}" ]; then
			echo "mcp-ts-e2e: $tool is not installed; CI needs Node.js 20 or newer with npm for the TypeScript MCP client test" >&2
			exit 1
		fi
		echo "$tool is not installed (Node.js 20 or newer, with npm): skipping the TypeScript MCP client test"
		exit 0
	fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/trtbuild-mcp-ts.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp internal/mcptools/testdata/tsclient/package.json internal/mcptools/testdata/tsclient/package-lock.json \
	internal/mcptools/testdata/tsclient/client.mjs "$work/"
go build -o "$work/trtbuild" ./cmd/trtbuild
cp testdata/models/convnet.onnx "$work/convnet.onnx"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
HOME="$work" XDG_CACHE_HOME="$work/cache" node "$work/client.mjs" "$work/trtbuild" "$work/convnet.onnx" "$work/state"
