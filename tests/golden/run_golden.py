#!/usr/bin/env python3
"""Placeholder golden runner; replaced by the real one."""
import sys
print("0 golden cases")
sys.exit(0)
