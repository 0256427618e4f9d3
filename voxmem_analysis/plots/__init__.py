"""Figures. Each function takes the DataFrame an analysis returned and only draws it."""
