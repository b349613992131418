#!/bin/sh
# Side by side: agentteam and the OpenAI Agents SDK for JavaScript against one
# fake server. Usage, from the repository root:
#   internal/bench/peerbench/run.sh [peerbench flags...]     e.g. -runs 5 -tmpdir /dev/shm
# PEER_DIR reuses an installed peer; else peer.mjs from PEER_SRC is installed
# (npm install @openai/agents@0.20.0 zod) in a temporary directory.
set -eu
PEER_SRC=${PEER_SRC:-/work/shared/bench/agentsjs}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ -z "${PEER_DIR:-}" ]; then
	PEER_DIR=$out/peer
	mkdir -p "$PEER_DIR"
	cp "$PEER_SRC/peer.mjs" "$PEER_DIR/"
	(cd "$PEER_DIR" && npm init -y >/dev/null && npm install --silent @openai/agents@0.20.0 zod >/dev/null)
fi
go build -o "$out/agentteam" .
go build -o "$out/peerbench" ./internal/bench/peerbench
"$out/peerbench" -bin "$out/agentteam" -peer "$PEER_DIR" "$@"
