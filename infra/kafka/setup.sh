#!/usr/bin/env bash
# Fetches the Kafka broker's jars from Maven Central into infra/kafka/lib (once; later runs are a no-op).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -f "$here/lib/.complete" ]; then exit 0; fi
command -v java >/dev/null || { echo "infra/kafka: java (17+) is required" >&2; exit 1; }
command -v mvn >/dev/null || { echo "infra/kafka: maven is required" >&2; exit 1; }
rm -rf "$here/lib"
( cd "$here" && mvn -B -q dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=lib )
touch "$here/lib/.complete"
echo "infra/kafka: $(ls "$here/lib" | grep -c '\.jar$') jars in $here/lib"
