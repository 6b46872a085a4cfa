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
