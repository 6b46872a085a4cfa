"""The `vegas-table score` contract of DESIGN.md, through the real command."""

from __future__ import annotations

import json

import pytest

DESIGN_EXAMPLE = {
    "edition": "classic",
    "neutral": ["white"],
    "casinos": [
        {"casino": 1, "notes": [80000, 30000, 10000],
         "dice": {"anna": 5, "benno": 3, "carla": 3, "denny": 1}, "big_dice": {}}
    ],
}


def test_design_example(cli):
    out = cli("score", stdin=json.dumps(DESIGN_EXAMPLE))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["casinos"] == [{
        "casino": 1,
        "cancelled": ["benno", "carla"],
        "payouts": [{"player": "anna", "amount": 80000}, {"player": "denny", "amount": 30000}],
        "unclaimed": [10000],
    }]
    assert result["totals"] == {"anna": 80000, "benno": 0, "carla": 0, "denny": 30000}


def test_neutral_player_is_ranked_but_gets_no_total(cli):
    # classic-2012.md, variant example 1: "The $80,000 note goes to white ... Benno receives
    # the $30,000 note."
    request = {"edition": "classic", "casinos": [
        {"casino": 2, "notes": [30000, 80000], "dice": {"white": 3, "benno": 2, "anna": 1}}]}
    result = json.loads(cli("score", stdin=json.dumps(request)).stdout)
    assert result["casinos"][0]["payouts"] == [
        {"player": "white", "amount": 80000}, {"player": "benno", "amount": 30000}]
    assert result["totals"] == {"benno": 30000, "anna": 0}


def test_biggy_counts_two_and_casinos_keep_input_order(cli):
    # royale-2019.txt payout example 1: Carla's one die plus Biggy (= 3) ties Ben's three.
    request = {"edition": "royale", "casinos": [
        {"casino": 6, "notes": [40000, 40000], "dice": {"ben": 1}},
        {"casino": 5, "notes": [70000, 30000],
         "dice": {"anna": 5, "ben": 3, "carla": 1, "denny": 1}, "big_dice": {"carla": 1}},
    ]}
    result = json.loads(cli("score", stdin=json.dumps(request)).stdout)
    assert [c["casino"] for c in result["casinos"]] == [6, 5]
    assert result["casinos"][1]["cancelled"] == ["ben", "carla"]
    assert result["casinos"][1]["payouts"] == [
        {"player": "anna", "amount": 70000}, {"player": "denny", "amount": 30000}]
    assert result["casinos"][0]["unclaimed"] == [40000]
    assert result["totals"] == {"ben": 40000, "anna": 70000, "carla": 0, "denny": 30000}


def test_royale_card_of_100000_is_accepted(cli):
    # The Royale text does not list its 90 cards, and its tiles pay $100,000 from the bank.
    request = {"edition": "royale", "casinos": [
        {"casino": 6, "notes": [100000, 90000], "dice": {"anna": 3, "ben": 2}}]}
    out = cli("score", stdin=json.dumps(request))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["casinos"][0]["payouts"] == [
        {"player": "anna", "amount": 100000}, {"player": "ben", "amount": 90000}]


@pytest.mark.parametrize("edition", ["custom", "royale"])
def test_card_editions_pay_two_places_a_short_pair_still_scores(cli, edition):
    # Both card texts pay 1st and 2nd place only; a pair the deck could not complete has
    # one card, which 1st place takes.
    card = 10 if edition == "custom" else 10000
    request = {"edition": edition, "casinos": [
        {"casino": 1, "notes": [card], "dice": {"anna": 3, "ben": 2}}]}
    out = cli("score", stdin=json.dumps(request))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["totals"] == {"anna": card, "ben": 0}


@pytest.mark.parametrize(
    ("request_text", "field"),
    [
        ("not json", "stdin is not valid JSON"),
        ("[]", "input must be one JSON object"),
        ('{"edition": "poker", "casinos": []}', "edition"),
        ('{"edition": "classic"}', "casinos"),
        ('{"edition": "classic", "casinos": [{"casino": 7, "notes": []}]}', "casinos[0].casino"),
        ('{"edition": "classic", "casinos": [{"casino": 1, "notes": [15000]}]}',
         "casinos[0].notes[0]"),
        ('{"edition": "custom", "casinos": [{"casino": 1, "notes": [2]}]}', "casinos[0].notes[0]"),
        ('{"edition": "classic", "casinos": [{"casino": 1, "notes": [], "dice": {"a": -1}}]}',
         "casinos[0].dice.a"),
        ('{"edition": "classic", "casinos": [{"casino": 1, "notes": [], "dice": {"a": 1.5}}]}',
         "casinos[0].dice.a"),
        ('{"edition": "classic", "casinos": [{"casino": 1, "notes": [], "big_dice": {"a": 1}}]}',
         "casinos[0].big_dice"),
        ('{"edition": "classic", "casinos": [{"casino": 1, "notes": []}, '
         '{"casino": 1, "notes": []}]}', "casinos[1].casino"),
        ('{"edition": "classic", "neutral": "white", "casinos": []}', "neutral"),
        ('{"edition": "classic", "casinos": [{"casino": 1, "notes": [], "dise": {}}]}',
         "casinos[0].dise"),
        ('{"edition": "custom", "casinos": [{"casino": 1, "notes": [10, 9, 8], '
         '"dice": {"a": 3, "b": 2, "c": 1}}]}',
         "casinos[0].notes: a custom casino holds exactly 2 cards, got 3"),
        ('{"edition": "royale", "casinos": [{"casino": 2, "notes": [30000, 20000, 10000], '
         '"dice": {"a": 3, "b": 2, "c": 1}}]}',
         "casinos[0].notes: a royale casino holds exactly 2 cards, got 3"),
        ('{"edition": "royale", "casinos": [{"casino": 1, "notes": [15000]}]}',
         "casinos[0].notes[0]: 15000 is not a royale note value"),
        ('{"edition": "royale", "casinos": [{"casino": 1, "notes": [0]}]}',
         "casinos[0].notes[0]: 0 is not a royale note value"),
        ('{"edition": "royale", "casinos": [{"casino": 1, "notes": [-10000]}]}',
         "casinos[0].notes[0]"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_field(cli, request_text, field):
    out = cli("score", stdin=request_text)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert field in lines[0]
    assert "Traceback" not in out.stderr
