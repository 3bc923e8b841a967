#!/usr/bin/env bash
# Stops the broker started by start.sh on KAFKA_PORT (default 9092). KAFKA_WIPE=1 also deletes its data.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${KAFKA_PORT:-9092}"
data="${KAFKA_DATA_DIR:-$here/data-$port}"
pidfile="$data/broker.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  pid="$(cat "$pidfile")"
  kill "$pid"
  for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null || true
  echo "infra/kafka: broker on $port stopped"
fi
rm -f "$pidfile"
if [ "${KAFKA_WIPE:-0}" = "1" ]; then rm -rf "$data"; fi
