import os
import sys

# Make tests/oracle.py importable as `oracle` from every test module.
sys.path.insert(0, os.path.dirname(__file__))
