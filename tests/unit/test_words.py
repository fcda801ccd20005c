"""The shared words every text uses: expected values written by hand."""

from __future__ import annotations

from migcheck.words import listing, plural


def test_plural_counts_one_and_many() -> None:
    assert (plural(1, "thread"), plural(2, "thread"), plural(0, "thread")) == (
        "1 thread",
        "2 threads",
        "0 threads",
    )


def test_listing_joins_with_commas_and_a_final_and() -> None:
    assert listing(["orders"]) == "orders"
    assert listing(["customers", "orders"]) == "customers and orders"
    assert listing(["a", "b", "c"]) == "a, b and c"
