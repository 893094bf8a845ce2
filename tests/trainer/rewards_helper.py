"""A user's reward function for the custom-reward test (imported by "module:function")."""


def short_replies(record, seat):
    turns = [t for t in record.turns if t.player == seat]
    return -sum(len(t.raw) for t in turns) / max(1, len(turns))
