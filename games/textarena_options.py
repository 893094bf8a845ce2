"""The options each playable TextArena game takes, declared and bounded (see arena.game_options).

TextArena passes constructor keyword arguments straight into its games and checks few of them:
`Minesweeper-v0` with 100 mines on a 3x3 board loops forever placing them, `ConnectFour-v0` with an
8000x8000 board renders 128 MB of text a turn. So a client's options reach `ta.make` only through
this table: a game takes exactly the options declared here, within ranges that keep it small and
finishing, and a game with no entry takes none.

Each entry was read off the game's constructor and its use of the value in
textarena/envs/<Game>/env.py; the defaults are the keyword arguments that TextArena's registry
(textarena/envs/__init__.py) fixes for the id, or the constructor's own default where the registry
fixes none (tests/games/test_textarena_options.py holds them to that). Options whose effect is not
simple to bound are left out on purpose: word lists, data paths, custom equations, payoff tables
given as lists, room shapes, and flags that hide the move lists our legal-move finder reads.
The wrapper variants `-raw` and `-train` of an id are registered with the same arguments and take
the same options; other variants (`-hard`, `-large`, ...) fix their own and take none.
"""

from __future__ import annotations

from typing import Any

from arena.game_options import (
    CrossCheck,
    Option,
    OptionSchema,
    bool_option,
    choice_option,
    float_option,
    int_list_option,
    int_option,
)

NO_OPTIONS = OptionSchema()
WRAPPER_SUFFIXES = ("-train", "-raw")  # register_with_versions: same entry point and arguments


def _max_turns(default: int, high: int, what: str = "turns before the game ends") -> Option:
    return int_option("max_turns", default, 1, high, what)


def _rounds(name: str, default: int, high: int = 20, what: str = "rounds played") -> Option:
    return int_option(name, default, 1, high, what)


def _below(option: str, other: str) -> CrossCheck:
    return CrossCheck(
        option,
        f"{option}: above {other}",
        lambda v: None if v[option] > v[other] else f"must be above {other} ({v[other]:g})",
    )


def _mines_problem(v: dict[str, Any]) -> str | None:
    # TextArena keeps a 3x3 safe area around the first move and places mines by retrying random
    # cells until it has them all: a board too full never finishes.
    cells = v["rows"] * v["cols"]
    most = cells // 3
    return None if v["num_mines"] <= most else f"at most {most} for a {v['rows']}x{v['cols']} board (a third of the cells)"


def _holes_problem(v: dict[str, Any]) -> str | None:
    most = (v["size"] * v["size"] - 2) // 3
    return None if v["num_holes"] <= most else f"at most {most} on a {v['size']}x{v['size']} lake (a third of the free cells)"


def _even(option: str) -> CrossCheck:
    return CrossCheck(option, f"{option}: even", lambda v: None if v[option] % 2 == 0 else "must be even")


def _code_problem(v: dict[str, Any]) -> str | None:
    # Without repeats the secret is drawn with random.sample, which needs enough distinct digits.
    if v["duplicate_numbers"] or v["code_length"] <= v["num_numbers"]:
        return None
    return f"at most num_numbers ({v['num_numbers']}) when duplicate_numbers is false"


def _blinds_problem(v: dict[str, Any]) -> str | None:
    if v["big_blind"] <= v["small_blind"]:
        return f"must be above small_blind ({v['small_blind']})"
    if v["big_blind"] > v["starting_chips"] // 10:
        return f"at most a tenth of starting_chips ({v['starting_chips'] // 10})"
    return None


_PAYOFF = (-100, 100)
_IPD_OPTIONS = (
    _rounds("num_rounds", 10),
    int_option("communication_turns", 1, 1, 5, "chat turns each before every decision"),
    int_option("cooperate_reward", 3, *_PAYOFF, "each player's payoff when both cooperate"),
    int_option("defect_reward", 5, *_PAYOFF, "the defector's payoff against a cooperator"),
    int_option("sucker_reward", 0, *_PAYOFF, "the cooperator's payoff against a defector"),
    int_option("mutual_defect_reward", 1, *_PAYOFF, "each player's payoff when both defect"),
)

TEXTARENA_OPTIONS: dict[str, OptionSchema] = {
    "2048-v0": OptionSchema(
        (choice_option("target_tile", 2048, (8, 16, 32, 64, 128, 256, 512, 1024, 2048), "the tile that wins"),)
    ),
    "Bandit-v0": OptionSchema(
        (
            int_option("num_turns", 20, 1, 50, "button presses before the final choice"),
            float_option("p_gap", 0.1, 0.0, 0.8, "how much the best button's reward chance stands out"),
        )
    ),
    "Battleship-v0": OptionSchema(
        (int_option("grid_size", 5, 5, 10, "rows and columns of each grid (the longest ship is 5)"),)
    ),
    "Blackjack-v0": OptionSchema((int_option("num_hands", 5, 1, 20, "hands played against the dealer"),)),
    "Breakthrough-v0": OptionSchema(
        (
            int_option("board_size", 8, 5, 8, "rows and columns of the board"),
            bool_option("is_open", True, "show the board to both players after every move"),
        )
    ),
    "CharacterConclave-v0": OptionSchema(
        (int_option("character_budget", 1000, 10, 2000, "characters each player may write in the discussion"),)
    ),
    "Chopsticks-v0": OptionSchema((_max_turns(40, 200, "turns before the game is drawn"),)),
    "ColonelBlotto-v0": OptionSchema(
        (
            int_option("num_fields", 3, 2, 10, "battlefields"),
            int_option("num_total_units", 20, 10, 100, "units each player allocates a round"),
            _rounds("num_rounds", 9, 19, "rounds at most (a majority of them wins)"),
        )
    ),
    "ConnectFour-v0": OptionSchema(
        (
            int_option("num_rows", 6, 4, 10, "rows of the board"),
            int_option("num_cols", 7, 4, 10, "columns of the board"),
            bool_option("is_open", True, "show the board to the players"),
        )
    ),
    "Crosswords-v0": OptionSchema((_max_turns(30, 100),)),
    "FifteenPuzzle-v0": OptionSchema((_max_turns(200, 300, "moves before the puzzle counts as unsolved"),)),
    "FrozenLake-v0": OptionSchema(
        (
            int_option("size", 4, 3, 8, "rows and columns of the lake"),
            int_option("num_holes", 3, 0, 20, "holes in the ice"),
            bool_option("randomize_start_goal", False, "start in a random corner, the goal opposite"),
        ),
        (CrossCheck("num_holes", "num_holes: at most a third of the free cells", _holes_problem),),
    ),
    "GuessTheNumber-v0": OptionSchema(
        (
            int_option("min_number", 1, 0, 999, "the smallest possible number"),
            int_option("max_number", 20, 1, 1000, "the largest possible number"),
            _max_turns(10, 50, "guesses allowed"),
        ),
        (_below("max_number", "min_number"),),
    ),
    "IndianPoker-v0": OptionSchema((_rounds("max_rounds", 5),)),
    "IteratedMatchingPennies-v0": OptionSchema((_rounds("num_rounds", 10),)),
    "IteratedPrisonersDilemma-v0": OptionSchema(_IPD_OPTIONS),
    "IteratedRockPaperScissors-v0": OptionSchema((_rounds("num_rounds", 9),)),
    "IteratedTwoThirdsAverage-v0": OptionSchema(
        (
            _rounds("num_rounds", 10),
            float_option("min_guess", 0.0, 0.0, 1000.0, "the smallest allowed guess"),
            float_option("max_guess", 100.0, 1.0, 1000.0, "the largest allowed guess"),
        ),
        (_below("max_guess", "min_guess"),),
    ),
    "IteratedUltimatumGame-v0": OptionSchema(
        (
            int_option("pool", 50, 1, 1000, "money to split each round"),
            _max_turns(10, 20, "turns in all (two a round: offer, answer)"),
            bool_option("alternate_roles", False, "swap proposer and responder every round"),
        ),
        (_even("max_turns"),),
    ),
    "KuhnPoker-v0": OptionSchema((_rounds("max_rounds", 3, what="hands played"),)),
    "LiarsDice-v0": OptionSchema((int_option("num_dice", 5, 1, 6, "dice each player starts with"),)),
    "LightsOut-v0": OptionSchema(
        (int_option("size", 5, 3, 8, "rows and columns of the grid"), _max_turns(20, 100, "presses allowed"))
    ),
    "LogicPuzzle-v0": OptionSchema(
        (choice_option("difficulty", "easy", ("easy", "hard"), "which puzzle set to draw from"), _max_turns(30, 50))
    ),
    "MarketEntryGame-v0": OptionSchema(
        (
            _rounds("num_rounds", 5, 10),
            int_option("communication_turns", 3, 1, 5, "chat turns each before every decision"),
            int_option("market_capacity", 2, 1, 8, "entrants the market holds profitably"),
            int_option("entry_profit", 15, *_PAYOFF, "an entrant's payoff when the market is not crowded"),
            int_option("overcrowding_penalty", -5, *_PAYOFF, "an entrant's payoff when it is"),
            int_option("safe_payoff", 5, *_PAYOFF, "the payoff for staying out"),
        )
    ),
    "Mastermind-v0": OptionSchema(
        (
            int_option("code_length", 4, 2, 6, "digits in the secret code"),
            int_option("num_numbers", 6, 2, 9, "each digit is 1..num_numbers"),
            _max_turns(20, 30, "guesses allowed"),
            bool_option("duplicate_numbers", False, "the code may repeat a digit"),
        ),
        (CrossCheck("code_length", "code_length: at most num_numbers without duplicates", _code_problem),),
    ),
    "MemoryGame-v0": OptionSchema(
        (
            # Every pair of hidden cells is a candidate move: 6x6 would mean 630 trials a turn.
            choice_option("grid_size", 4, (2, 4), "rows and columns of the grid (even: cards come in pairs)"),
            _max_turns(30, 100),
        )
    ),
    "Minesweeper-v0": OptionSchema(
        (
            int_option("rows", 8, 5, 16, "rows of the board"),
            int_option("cols", 8, 5, 16, "columns of the board"),
            int_option("num_mines", 10, 1, 85, "mines hidden on the board"),
            _max_turns(100, 300, "moves allowed"),
        ),
        (CrossCheck("num_mines", "num_mines: at most a third of rows x cols", _mines_problem),),
    ),
    "Nim-v0": OptionSchema((int_list_option("piles", (3, 4, 5), 1, 20, 1, 6, "objects in each pile at the start"),)),
    "PegJump-v0": OptionSchema((int_option("initial_empty", 5, 1, 15, "the hole (1-15) that starts empty"),)),
    "PigDice-v0": OptionSchema(
        (
            int_option("winning_score", 100, 10, 200, "points that win"),
            _max_turns(100, 300, "turns before the game ends"),
        )
    ),
    "Poker-v0": OptionSchema(
        (
            _rounds("num_rounds", 10, what="hands played"),
            int_option("starting_chips", 1000, 100, 10000, "chips each player starts with"),
            int_option("small_blind", 10, 1, 500, "the small blind"),
            int_option("big_blind", 20, 2, 1000, "the big blind"),
        ),
        (CrossCheck("big_blind", "big_blind: above small_blind, at most a tenth of starting_chips", _blinds_problem),),
    ),
    "PublicGoodsGame-v0": OptionSchema(
        (
            _rounds("num_rounds", 3, 10),
            int_option("communication_turns", 3, 1, 5, "chat turns each before every contribution"),
            int_option("endowment", 20, 1, 100, "tokens each player receives a round"),
            float_option("multiplication_factor", 1.5, 1.0, 5.0, "what the pot is multiplied by before it is shared"),
        )
    ),
    "SecretMafia-v0": OptionSchema(
        (
            float_option("mafia_ratio", 0.25, 0.1, 0.35, "the share of players who are Mafia (at least one)"),
            int_option("discussion_rounds", 3, 1, 5, "discussion rounds each day before the vote"),
        )
    ),
    "Secretary-v0": OptionSchema((int_option("N", 5, 1, 50, "values shown one after the other"),)),
    "SimpleBlindAuction-v0": OptionSchema(
        (
            int_option("starting_capital", 1000, 100, 10000, "coins each player starts with"),
            int_option("num_items", 5, 1, 15, "items auctioned"),
            int_option("conversation_rounds", 3, 1, 5, "chat rounds before the bids"),
        )
    ),
    "SimpleNegotiation-v0": OptionSchema((_max_turns(10, 30),)),
    "SimpleTak-v0": OptionSchema((int_option("board_size", 4, 3, 6, "rows and columns of the board"),)),
    "Snake-v0": OptionSchema(
        (
            int_option("width", 5, 5, 12, "columns of the board"),
            int_option("height", 5, 5, 12, "rows of the board"),
            int_option("num_apples", 2, 1, 5, "apples on the board at a time"),
            _max_turns(40, 100),
        )
    ),
    "Sokoban-v0": OptionSchema((_max_turns(30, 100, "moves allowed"),)),
    "Sudoku-v0": OptionSchema(
        (
            # Fewer clues cost a uniqueness search per removed cell at every reset.
            int_option("clues", 60, 40, 80, "filled cells at the start"),
            _max_turns(100, 100, "moves allowed"),
        )
    ),
    "Surround-v0": OptionSchema(
        (
            int_option("width", 5, 5, 12, "columns of the board"),
            int_option("height", 5, 5, 12, "rows of the board"),
            _max_turns(40, 100),
        )
    ),
    "Taboo-v0": OptionSchema(
        (
            _rounds("max_rounds", 4, 5),
            int_option("max_attempts_per_player", 6, 1, 10, "clues and guesses each player gets a round"),
        )
    ),
    "ThreeCardMonte-v0": OptionSchema(
        (
            int_option("num_cups", 3, 3, 10, "cups on the table"),
            int_option("steps", 10, 1, 30, "swaps shown before the guess"),
        )
    ),
    "ThreePlayerIPD-v0": OptionSchema((_rounds("num_rounds", 5), *_IPD_OPTIONS[1:])),
    "TowerOfHanoi-v0": OptionSchema(
        (int_option("num_disks", 3, 1, 6, "disks to move"), _max_turns(14, 100, "moves allowed"))
    ),
    "TruthAndDeception-v0": OptionSchema((_max_turns(6, 20, "turns of conversation, the guess included"),), (_even("max_turns"),)),
}


def schema_for(env_id: str) -> OptionSchema:
    """The options `env_id` takes (its wrapper variants share its entry); none when not listed."""
    if env_id in TEXTARENA_OPTIONS:
        return TEXTARENA_OPTIONS[env_id]
    for suffix in WRAPPER_SUFFIXES:
        if env_id.endswith(suffix) and env_id[: -len(suffix)] in TEXTARENA_OPTIONS:
            return TEXTARENA_OPTIONS[env_id[: -len(suffix)]]
    return NO_OPTIONS
