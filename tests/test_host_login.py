"""The host's PIN and login: kept across restarts, renewed only when asked, hard to guess."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from web.app import Settings, create_app
from web.auth import FILENAME, HostFile
from web.session import TableSession


def _app(table: TableSession, **settings):
    return create_app(table, Settings(**settings))


def _login(client, pin: str, addr: str = "127.0.0.1"):
    return client.post("/api/login", json={"pin": pin}, environ_base={"REMOTE_ADDR": addr})


def test_the_pin_and_the_login_survive_a_restart(table: TableSession, tmp_path: Path):
    first = _app(table)
    pin = first.extensions["host_file"].credentials.pin
    assert len(pin) == 6 and pin.isdigit()
    path = tmp_path / FILENAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    client = first.test_client()
    assert _login(client, pin).status_code == 200
    cookie = client.get_cookie("session")
    # The "restart": a new app on the same data dir, the same browser cookie.
    second = _app(table)
    assert second.extensions["host_file"].credentials.pin == pin
    again = second.test_client()
    again.set_cookie("session", cookie.value)
    assert again.get("/api/whoami").get_json()["host"] is True
    assert again.post("/api/display", json={"hide_money": True}).status_code == 200


def test_a_new_pin_from_the_command_line_ends_every_login(table: TableSession, tmp_path: Path,
                                                          cli):
    app = _app(table)
    old = app.extensions["host_file"].credentials.pin
    client = app.test_client()
    assert _login(client, old).status_code == 200
    assert cli("pin", "--data-dir", str(tmp_path)).stdout.strip() == old
    out = cli("pin", "--new", "--json", "--data-dir", str(tmp_path), env={"VEGAS_TABLE_PIN": ""})
    assert out.returncode == 0, out.stderr
    new = json.loads(out.stdout)["pin"]
    assert new != old and len(new) == 6
    # The running table notices: the old login is over, the old PIN wrong, the new one right.
    assert client.get("/api/whoami").get_json()["host"] is False
    assert client.post("/api/display", json={"hide_money": True}).status_code == 401
    assert _login(client, old).status_code == 403
    assert _login(client, new).status_code == 200


def test_the_host_can_make_a_new_pin_from_the_table_page(table: TableSession):
    app = _app(table)
    host, other = app.test_client(), app.test_client()
    pin = app.extensions["host_file"].credentials.pin
    assert _login(host, pin).status_code == 200
    assert _login(other, pin).status_code == 200
    assert other.post("/api/pin/new", json={}).status_code == 200  # any host may
    r = host.post("/api/pin/new", json={})
    assert r.status_code == 401, "the first new PIN ended this login"
    assert _login(host, r.get_json().get("pin", "x")).status_code == 403


def test_a_pin_fixed_for_the_run_overrides_the_kept_one(table: TableSession):
    app = _app(table, pin="8642")
    client = app.test_client()
    assert _login(client, "8642").status_code == 200
    r = client.post("/api/pin/new", json={})
    assert r.status_code == 409 and "fixed" in r.get_json()["error"]


def test_a_damaged_pin_file_is_set_aside_and_a_new_pin_made(table: TableSession,
                                                            tmp_path: Path):
    (tmp_path / FILENAME).write_bytes(os.urandom(300))
    host = HostFile(tmp_path)
    assert host.credentials.pin.isdigit()
    assert "set aside" in host.problem
    assert list(tmp_path.glob(f"{FILENAME}.damaged-*"))


def test_guessing_from_many_addresses_is_slowed_down_for_everyone(table: TableSession):
    app = _app(table, login_attempts=5, login_global_free=20)
    client = app.test_client()
    pin = app.extensions["host_file"].credentials.pin
    wrong = "000000" if pin != "000000" else "111111"
    codes = [_login(client, wrong, f"10.0.0.{i}").status_code for i in range(60)]
    assert codes[:20] == [403] * 20
    assert 429 in codes[20:], "the 21st address's guess onwards must wait"
    r = _login(client, pin, "10.0.1.1")
    assert r.status_code == 429 and "try again" in r.get_json()["error"]
    assert int(r.headers["Retry-After"]) >= 1
    # The host, already logged in, is not locked out, and is told of the guessing.
    assert client.application.extensions["login_guard"].report()["recent"] >= 20


def test_the_host_sees_wrong_pin_tries(table: TableSession):
    app = _app(table)
    host, guesser = app.test_client(), app.test_client()
    pin = app.extensions["host_file"].credentials.pin
    assert _login(host, pin).status_code == 200
    wrong = "123456" if pin != "123456" else "654321"
    for _ in range(3):
        assert _login(guesser, wrong, "192.0.2.7").status_code == 403
    w = host.get("/api/whoami").get_json()
    assert w["wrong_pins"]["recent"] == 3
    assert w["wrong_pins"]["last_from"] == "192.0.2.7"
    assert "wrong_pins" not in guesser.get("/api/whoami").get_json()
