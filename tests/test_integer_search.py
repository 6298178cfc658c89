"""largest_holding against a linear scan on monotone conditions, the edge cases included."""

from __future__ import annotations

import math

import pytest

from oraclepriv.integer_search import largest_holding


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 7, 8, 9, 100, 1023, 1024, 1025])
def test_a_threshold_condition_gives_the_scan(limit):
    assert largest_holding(lambda m: m <= limit) == limit


@pytest.mark.parametrize(("d", "limit"), [(1, 10), (2, 1000), (3, 4_000_000), (5, 10**9)])
def test_fast_growing_counts_give_the_scan(d, limit):
    scan = 0
    while math.comb(scan + 1, d) * 2 ** (d + 1) <= limit:
        scan += 1
    assert largest_holding(lambda m: math.comb(m, d) * 2 ** (d + 1) <= limit) == scan


def test_a_condition_failing_at_one_gives_zero_without_asking_zero():
    asked = []
    assert largest_holding(lambda m: asked.append(m) or False) == 0
    assert 0 not in asked
