"""The kafka-python face imports on every supported version; ``Processor`` needs 3.x.

Runs in every kafka-python matrix venv (scripts/version_matrix.sh): on 2.x the face must still
import (the hooks, the assignors and the commit guard work there) and ``Processor`` must say in
one error that it needs 3.x, before it touches the consumer.
"""

from __future__ import annotations

import kafka
import pytest

from kafka_sticky_plugin.errors import UnsupportedClientError
from kafka_sticky_plugin.kafka_python import Processor, guard_commits, install_hooks


def test_the_face_imports_with_its_processing_helper() -> None:
    assert callable(install_hooks) and callable(guard_commits) and isinstance(Processor, type)


@pytest.mark.skipif(
    hasattr(kafka, "AsyncConsumerRebalanceListener"),
    reason="kafka-python 3.x: Processor runs (integration_tests/processing)",
)
def test_processor_on_kafka_python_2_says_it_needs_3() -> None:
    with pytest.raises(UnsupportedClientError, match=r"kafka-python 3\.x"):
        Processor(object(), print)  # type: ignore[arg-type]  # refused before it is used
