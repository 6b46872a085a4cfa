"""Frames in, dice out: frame sources, the dice reader and the turn tracker.

Knows nothing of payouts; the tracker is handed plain facts (who moves, their colours, how
many dice they hold). Built in the vision issues; the rules engine does not depend on it.
"""
