import unittest

from calculator import add, subtract


class TestAdd(unittest.TestCase):
    def test_adds_two_numbers(self):
        self.assertEqual(add(2, 3), 5)

    def test_adds_negative_numbers(self):
        self.assertEqual(add(-1, -4), -5)


class TestSubtract(unittest.TestCase):
    def test_subtracts_two_numbers(self):
        self.assertEqual(subtract(5, 3), 2)

    def test_subtract_to_negative(self):
        self.assertEqual(subtract(1, 4), -3)


if __name__ == "__main__":
    unittest.main()
