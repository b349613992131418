#!/bin/sh
# The stores side by side: the files and NATS JetStream.
# Usage, from the repository root:
#   internal/bench/storebench/run.sh [storebench flags...]     e.g. -loops 5 -r3=false
# Builds agentteam (whose serve runs the JetStream servers and whose run is
# scenario 3) and storebench in a temporary directory, then runs them.
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/agentteam" .
go build -o "$out/storebench" ./internal/bench/storebench
"$out/storebench" -bin "$out/agentteam" "$@"
