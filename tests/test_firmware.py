"""Every firmware kernel on the reference model, checked against its numpy golden function."""
from __future__ import annotations

import pytest

from firmware_tests.manifest import TESTS
from dcu.firmware import run_firmware
from tests.asmutil import needs_llvm

pytestmark = needs_llvm


@pytest.mark.parametrize("test", TESTS, ids=lambda t: t.name)
def test_firmware_on_model(test):
    result = run_firmware(test, backend="model")
    assert result.ok, result.describe()
    report = result.run.report
    assert report.instructions > 0
    # every wave that was launched ran to s_endpgm: waves = workgroups x waves per workgroup
    block = 1
    for b in test.block:
        block *= b
    groups = 1
    for g in test.grid:
        groups *= g
    assert report.counters["workgroups"] == groups
    assert report.counters["waves"] == groups * -(-block // 32)
