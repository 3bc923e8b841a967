#!/usr/bin/env bash
# Starts a single-node KRaft Kafka broker from Maven Central jars, without Docker.
#   KAFKA_PORT (default 9092), KAFKA_CONTROLLER_PORT (default KAFKA_PORT+1),
#   KAFKA_DATA_DIR (default infra/kafka/data-$KAFKA_PORT), KAFKA_HEAP (default 512m).
# Idempotent: a broker already answering on the port is left alone; formatted storage is reused.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${KAFKA_PORT:-9092}"
cport="${KAFKA_CONTROLLER_PORT:-$((port + 1))}"
data="${KAFKA_DATA_DIR:-$here/data-$port}"
heap="${KAFKA_HEAP:-512m}"
pidfile="$data/broker.pid"

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && listening "$port"; then
  echo "infra/kafka: broker already running on 127.0.0.1:$port (pid $(cat "$pidfile"))"
  exit 0
fi

bash "$here/setup.sh"
mkdir -p "$data/log"
sed -e "s|@PORT@|$port|g" -e "s|@CONTROLLER_PORT@|$cport|g" -e "s|@DATA_DIR@|$data/log|g" \
  "$here/server.properties.template" > "$data/server.properties"
if [ ! -f "$data/cluster.id" ]; then
  java -cp "$here/lib/*" kafka.tools.StorageTool random-uuid > "$data/cluster.id"
fi
if [ ! -f "$data/log/meta.properties" ]; then
  java -Dlog4j.configuration="file:$here/log4j.properties" -cp "$here/lib/*" kafka.tools.StorageTool \
    format -t "$(cat "$data/cluster.id")" -c "$data/server.properties" --ignore-formatted >/dev/null
fi
nohup java -Xms128m -Xmx"$heap" -XX:+UseG1GC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
  -Dlog4j.configuration="file:$here/log4j.properties" \
  -cp "$here/lib/*" kafka.Kafka "$data/server.properties" > "$data/broker.log" 2>&1 &
echo $! > "$pidfile"

for _ in $(seq 1 240); do
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "infra/kafka: broker exited; last lines of $data/broker.log:" >&2
    tail -20 "$data/broker.log" >&2
    exit 1
  fi
  if grep -q "Kafka Server started" "$data/broker.log" 2>/dev/null && listening "$port"; then
    echo "infra/kafka: broker ready on 127.0.0.1:$port (pid $(cat "$pidfile"), data $data)"
    exit 0
  fi
  sleep 0.25
done
echo "infra/kafka: broker did not start within 60 s; see $data/broker.log" >&2
exit 1
