"""Lighting, tray geometry and dice-colour calibration, saved as versioned profile files.

Uses `vision` to find dice and writes the profile that `vision` reads as plain data.
"""
