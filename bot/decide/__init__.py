"""Deciding (pure): paired-ratio statistics, the verdict, run-to-run noise and calibration."""
