"""Reads flashlog's topics from a Kafka broker with confluent-kafka (librdkafka) and validates every
record's value against the topic's JSON Schema (schemas/TOPIC.schema.json), as an indexer written
outside JavaScript would.

usage: validate_topics.py BROKERS SCHEMAS_DIR RANGES_JSON [TOPIC_PREFIX]
  RANGES_JSON: {"flashlog.blocks": {"0": [start, end]}, ...}: read offsets start <= o < end.
  TOPIC_PREFIX: flashlog's --topic-prefix: the topic read is TOPIC_PREFIX + the name in RANGES_JSON.
prints one JSON object: {topic: {"records": n, "invalid": [first errors], "keys": n, "types": {...}}}
"""
import json
import sys
import time

import jsonschema
from confluent_kafka import Consumer, KafkaError, TopicPartition


def main() -> int:
    brokers, schemas_dir, ranges = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    prefix = sys.argv[4] if len(sys.argv) > 4 else ""
    validators = {}
    for topic in ranges:
        with open(f"{schemas_dir}/{topic}.schema.json", encoding="utf-8") as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[topic] = jsonschema.Draft202012Validator(schema)

    consumer = Consumer({
        "bootstrap.servers": brokers,
        "group.id": "flashlog-python-validator",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    })
    assignments, remaining = [], {}
    for topic, partitions in ranges.items():
        for partition, (start, end) in partitions.items():
            if end > start:
                assignments.append(TopicPartition(prefix + topic, int(partition), start))
                remaining[(topic, int(partition))] = end
    consumer.assign(assignments)

    summary = {topic: {"records": 0, "invalid": [], "keys": 0, "types": {}} for topic in ranges}
    keys = {topic: set() for topic in ranges}
    deadline = time.monotonic() + 60
    while remaining and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is None:
            continue
        if message.error():
            if message.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise RuntimeError(str(message.error()))
        topic = message.topic()[len(prefix):]
        where = (topic, message.partition())
        end = remaining.get(where)
        if end is None or message.offset() >= end:
            continue
        entry = summary[topic]
        entry["records"] += 1
        keys[topic].add(message.key())
        try:
            value = json.loads(message.value())
            errors = sorted(validators[topic].iter_errors(value), key=lambda e: list(e.path))
            if isinstance(value, dict) and isinstance(value.get("type"), str):
                entry["types"][value["type"]] = entry["types"].get(value["type"], 0) + 1
            if isinstance(value, dict) and value.get("removed") is True:
                entry["types"]["removed"] = entry["types"].get("removed", 0) + 1
            if isinstance(value, dict) and "error" in value:
                entry["types"]["error"] = entry["types"].get("error", 0) + 1
        except ValueError as error:
            errors = [error]
        if errors and len(entry["invalid"]) < 5:
            first = errors[0]
            path = "/".join(str(p) for p in getattr(first, "path", []))
            entry["invalid"].append(f"offset {message.offset()}: {path}: {getattr(first, 'message', str(first))[:300]}")
        elif errors:
            entry["invalid"].append("...")
        if message.offset() + 1 >= end:
            del remaining[where]
    consumer.close()
    for topic in ranges:
        summary[topic]["keys"] = len(keys[topic])
    summary["_unread"] = [f"{t}/{p}" for (t, p) in remaining]
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
