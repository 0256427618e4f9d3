"""Reproducing the paper: notebook runner, published numbers, scoreboard, paper audit, report, supplement."""
