"""extend: a new method on an existing class, old behaviour kept."""

INVENTORY = '''"""A tiny stock ledger."""


class Inventory:
    def __init__(self):
        self._counts = {}

    def add(self, item, quantity=1):
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self._counts[item] = self._counts.get(item, 0) + quantity

    def remove(self, item, quantity=1):
        have = self._counts.get(item, 0)
        if quantity <= 0 or quantity > have:
            raise ValueError(f"cannot remove {quantity} {item}")
        if have == quantity:
            del self._counts[item]
        else:
            self._counts[item] = have - quantity

    def count(self, item):
        return self._counts.get(item, 0)
'''

INSTRUCTION = """Extend the `Inventory` class in `inventory.py` with a method `total_value(prices)`.

`prices` is a dict mapping item names to unit prices. The method returns the total value
of the stock: the sum of count × price over every item in stock. Items without a price
count as 0, and an empty inventory is worth 0. The existing methods must keep working
exactly as before.
"""

CHECK = """import importlib.util
import sys
import unittest

spec = importlib.util.spec_from_file_location("inventory", "/workspace/inventory.py")
inventory = importlib.util.module_from_spec(spec)
spec.loader.exec_module(inventory)


class Existing(unittest.TestCase):
    def test_add_remove_count(self):
        inv = inventory.Inventory()
        inv.add("apple", 3)
        inv.remove("apple", 1)
        self.assertEqual(inv.count("apple"), 2)
        self.assertEqual(inv.count("pear"), 0)

    def test_errors(self):
        inv = inventory.Inventory()
        with self.assertRaises(ValueError):
            inv.add("apple", 0)
        with self.assertRaises(ValueError):
            inv.remove("apple")


class TotalValue(unittest.TestCase):
    def test_sum(self):
        inv = inventory.Inventory()
        inv.add("apple", 3)
        inv.add("pear", 2)
        self.assertAlmostEqual(inv.total_value({"apple": 0.5, "pear": 1.25}), 4.0)

    def test_missing_price_is_zero(self):
        inv = inventory.Inventory()
        inv.add("plum", 4)
        inv.add("fig", 1)
        self.assertEqual(inv.total_value({"fig": 7}), 7)

    def test_empty(self):
        self.assertEqual(inventory.Inventory().total_value({"apple": 1}), 0)

    def test_removed_items_do_not_count(self):
        inv = inventory.Inventory()
        inv.add("kiwi", 2)
        inv.remove("kiwi", 2)
        self.assertEqual(inv.total_value({"kiwi": 10}), 0)


result = unittest.main(exit=False, verbosity=2).result
sys.exit(0 if result.wasSuccessful() else 1)
"""

SOLVE = """#!/bin/bash
set -euo pipefail
cat >> inventory.py <<'PY'

    def total_value(self, prices):
        return sum(count * prices.get(item, 0) for item, count in self._counts.items())
PY
"""

WORKSPACE = {"inventory.py": INVENTORY}
PROTECTED: dict[str, str] = {}
