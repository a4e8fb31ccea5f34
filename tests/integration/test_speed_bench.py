"""bench/speed.py's interval for the median of the paired per-round ratios: the order statistics
and coverages of the sign test (Binomial(n, 1/2)), checked against values worked out by hand."""
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import speed  # noqa: E402


@pytest.mark.parametrize("n, k, coverage", [
    (3, 1, 1 - 2 / 8),                      # too few rounds for 95%: the whole range, 75%
    (5, 1, 1 - 2 / 32),                     # 93.75%
    (7, 1, 1 - 2 / 128),                    # x(2)..x(6) would cover only 1 - 2 * 8/128 = 87.5%
    (9, 2, 1 - 2 * (1 + 9) / 512),          # x(2)..x(8): 96.1%
    (11, 2, 1 - 2 * (1 + 11) / 2048),       # x(3)..x(9) would be 1 - 2 * 67/2048 = 93.5%
    (15, 4, 1 - 2 * (1 + 15 + 105 + 455) / 2 ** 15),  # x(4)..x(12): 96.5%
])
def test_median_interval_takes_the_sign_test_order_statistics(n, k, coverage):
    values = [10.0 * (n - i) for i in range(n)]  # given unsorted: n*10 down to 10
    med, lo, hi, cov = speed.median_interval(values)
    assert med == 10.0 * ((n + 1) // 2)
    assert (lo, hi) == (10.0 * k, 10.0 * (n + 1 - k))
    assert cov == pytest.approx(coverage, abs=1e-12)
    assert cov >= 0.95 or k == 1


def test_median_interval_at_a_lower_level_is_narrower():
    med, lo, hi, cov = speed.median_interval(list(range(1, 10)), level=0.8)
    assert (med, lo, hi) == (5, 3, 7)  # x(3)..x(7) of 9: 1 - 2 * (1 + 9 + 36) / 512 = 82%
    assert cov == pytest.approx(1 - 2 * 46 / 512)
