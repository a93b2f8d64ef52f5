"""The golden generator's pieces; golden/generate.py is the entry point."""
