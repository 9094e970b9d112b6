"""The sample viewer: every answer of a run drawn as a grid beside its target (``write``), with the error shapes it
names (``shapes``) and the span of the text the parser read (``spans``). Written by ``g2m report`` and by the board's
model pages."""
