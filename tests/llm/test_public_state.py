"""A recorded turn's public state (arena.llm.llm_policy.public_state): its prompt with the seat's
own secret phrases masked. The trainer's private contrast groups turns by it, so two questions
that differ only in the card must share it, and any public difference must split it."""

from arena.llm.llm_policy import public_state
from arena.policy import PRIVATE_MASK, public_text

RULES = {"role": "system", "content": "You play Kuhn poker."}


def _ask(card: str, history: str = "Player 0 bet.") -> list[dict[str, str]]:
    return [RULES, {"role": "user", "content": f"Your card: {card}\n{history}\nIt is your turn: call, fold."}]


def test_two_questions_that_differ_only_in_the_card_share_a_public_state():
    legal = ["call", "fold"]
    king, jack = public_state(_ask("K"), legal, ("Your card: K",)), public_state(_ask("J"), legal, ("Your card: J",))
    assert king == jack and len(king) == 32


def test_a_public_difference_splits_it():
    legal = ["call", "fold"]
    assert public_state(_ask("K"), legal, ("Your card: K",)) != public_state(_ask("K", "Player 0 checked."), legal, ("Your card: K",))
    assert public_state(_ask("K"), legal, ("Your card: K",)) != public_state(_ask("K"), ["call", "fold", "raise"], ("Your card: K",))
    # without its secret named, the card is public text: K and J differ
    assert public_state(_ask("K"), legal, ()) != public_state(_ask("J"), legal, ())


def test_the_longest_phrase_is_masked_first():
    text = "Your private card (Player 0): K. Board card: K."
    assert public_text(text, ("K", "Your private card (Player 0): K")) == f"{PRIVATE_MASK}. Board card: {PRIVATE_MASK}."
    assert public_text(text, ("Your private card (Player 0): K",)) == f"{PRIVATE_MASK}. Board card: K."
    assert public_text(text, ("",)) == text
