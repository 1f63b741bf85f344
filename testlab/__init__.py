"""The project's own test laboratory (repository only, not in the wheel): Apache Kafka
launchers and clusters, secured clusters and certificates, fault gauntlets, the Java and raw
members, the librdkafka mock, the secret scan and the leftover-process pytest plugin."""
