import pyarrow as pa
import pytest

from pooling.arrow_memory import ENVIRONMENT_VARIABLE, use_system_allocator


@pytest.fixture
def arrow_pool():
    """Put Arrow's default pool back as it was after the test."""
    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    yield
    pa.set_memory_pool(before)


def test_the_workbench_allocates_arrow_memory_with_the_system_allocator():
    # Set when Django started (PoolingConfig.ready), in every process.
    assert pa.default_memory_pool().backend_name == "system"


def test_use_system_allocator_switches_the_default_pool(arrow_pool, monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert use_system_allocator() == "system"
    assert pa.default_memory_pool().backend_name == "system"


def test_an_explicit_arrow_setting_is_left_alone(arrow_pool, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "mimalloc")
    assert use_system_allocator() == "mimalloc"
