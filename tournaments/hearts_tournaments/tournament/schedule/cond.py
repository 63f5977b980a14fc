"""Necessary conditions on block designs: graphical degree sequences, symmetric designs
(Bruck-Ryser-Chowla), the missing projective planes."""

from __future__ import annotations

from collections.abc import Sequence
from math import isqrt

# --- Necessary conditions -------------------------------------------------------------------


def _graphical(degrees: Sequence[int]) -> bool:
    """Erdos-Gallai: whether some simple graph has these vertex degrees."""
    d = sorted(degrees, reverse=True)
    if sum(d) % 2:
        return False
    total = 0
    for k in range(1, len(d) + 1):
        total += d[k - 1]
        if total > k * (k - 1) + sum(min(x, k) for x in d[k:]):
            return False
    return True


def _symmetric_design_missing(v: int, k: int, lam: int) -> str | None:
    """Why no symmetric 2-(v, k, lam) design exists, or None if none of the known reasons applies."""
    order = k - lam
    if v % 2 == 0:
        if isqrt(order) ** 2 != order:
            return (
                f"a symmetric design on an even number of bots needs k - lambda = {order} to be "
                "a square (Bruck-Ryser-Chowla)"
            )
        return None
    sign = -1 if (v - 1) // 2 % 2 else 1
    if not _conic_solvable(order, sign * lam):
        return (
            f"x^2 = {order} y^2 {'-' if sign < 0 else '+'} {lam} z^2 has no solution besides 0, "
            f"which a symmetric design of {v} bots needs (Bruck-Ryser-Chowla)"
        )
    if lam == 1 and _no_plane(order):
        return f"no projective plane of order {order} exists"
    return None


def _no_plane(order: int) -> bool:
    """Projective planes that are proven not to exist, for the orders a table can give."""
    return order in (6, 10, 14)  # 6: Tarry / Bruck-Ryser; 10: Lam, Thiel and Swiercz 1989; 14: BRC


def _conic_solvable(a: int, b: int) -> bool:
    """Whether ``x^2 = a y^2 + b z^2`` has an integer solution other than zero (Hasse-Minkowski).

    True exactly when the Hilbert symbol ``(a, b)_p`` is 1 at every prime and at infinity.
    """
    if a == 0 or b == 0:
        return True
    if a < 0 and b < 0:
        return False
    primes = {2} | _prime_factors(abs(a)) | _prime_factors(abs(b))
    return all(_hilbert(a, b, p) == 1 for p in primes)


def _prime_factors(m: int) -> set[int]:
    out: set[int] = set()
    d = 2
    while d * d <= m:
        while m % d == 0:
            out.add(d)
            m //= d
        d += 1
    if m > 1:
        out.add(m)
    return out


def _hilbert(a: int, b: int, p: int) -> int:
    """The Hilbert symbol ``(a, b)_p`` of two non-zero integers at the prime ``p``."""

    def split(x: int) -> tuple[int, int]:
        e = 0
        while x % p == 0:
            x //= p
            e += 1
        return e, x

    alpha, u = split(a)
    beta, v = split(b)
    if p == 2:

        def eps(x: int) -> int:
            return ((x - 1) // 2) % 2

        def omega(x: int) -> int:
            return ((x * x - 1) // 8) % 2

        exponent = eps(u) * eps(v) + alpha * omega(v) + beta * omega(u)
        return -1 if exponent % 2 else 1

    def legendre(x: int) -> int:
        return 1 if pow(x % p, (p - 1) // 2, p) == 1 else -1

    sign = -1 if (alpha * beta * ((p - 1) // 2)) % 2 else 1
    return int(sign * legendre(u) ** beta * legendre(v) ** alpha)
