#!/usr/bin/env bash
# Install Vegas Table on a Raspberry Pi as a service that starts with the Pi.
#
#   sudo ./deploy/install.sh            install, or update after `git pull` (safe to rerun)
#   ./deploy/install.sh --dry-run       show every step and file, change nothing
#   sudo ./deploy/install.sh --uninstall [--purge]
#
# Made for Raspberry Pi OS Bookworm (64-bit) with a camera module; see deploy/README.md.
set -euo pipefail
umask 022  # the service user must be able to read the program files

PROG=install.sh
NAME=vegas-table
PREFIX=/opt/vegas-table
VENV=$PREFIX/venv
DATA_DIR=/var/lib/vegas-table
CONF_DIR=/etc/vegas-table
ENV_FILE=$CONF_DIR/env
UNIT_FILE=/etc/systemd/system/vegas-table.service
AVAHI_FILE=/etc/avahi/services/vegas-table.service
STAMP=$VENV/.vegas-table-source   # what was last installed into the venv (a hash of the sources)
SYSTEM_PYTHON=/usr/bin/python3

DEPLOY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
    cat <<EOF
Usage: sudo ./deploy/install.sh [OPTIONS]

Installs Vegas Table as the service "$NAME": the camera reads the dice and phones on the
same network open http://vegas-table.local to follow the game. Running it again updates
the install (after \`git pull\`) and changes nothing that is already right.

Options:
  --pin PIN          a table PIN of your choice (4 to 8 digits) for the host's controls, kept
                     in $ENV_FILE; without it the service makes one up and keeps it in
                     $DATA_DIR (\`vegas-table pin --new\` gives a new one)
  --pin auto         drop a PIN chosen before from $ENV_FILE: the service's own
                     counts again
  --port N           the web port (default 80, so the address needs no :port)
  --source SRC       the camera: picamera (default), picamera:N, webcam:N
  --hostname NAME    the machine's network name, giving http://NAME.local (default vegas-table)
  --keep-hostname    leave the machine's name alone (then it is http://<its name>.local)
  --checkout DIR     the Vegas Table folder to install from (default: the one holding this script)
  --dry-run          print every step, command and file (with its content); change nothing
  --root DIR         write every file under DIR instead of /, and only print the commands
                     (apt-get, useradd, systemctl, pip, ...): for tests and for looking
  --uninstall        remove the service, its program files, user and settings; the saved
                     games in $DATA_DIR stay unless --purge is given too
  --purge            with --uninstall: delete the saved games as well
  -h, --help         show this help
EOF
}

# --- output --------------------------------------------------------------------------------
die() { printf '%s: %s\n' "$PROG" "$*" >&2; exit 1; }
usage_error() { printf '%s: %s (see --help)\n' "$PROG" "$*" >&2; exit 2; }
warn() { printf '%s: warning: %s\n' "$PROG" "$*" >&2; }
step() { printf '\n==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }

# A command line as it could be pasted into a shell.
quote_cmd() {
    local out="" a
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then
            out+="$a "
        else
            out+="'${a//\'/\'\\\'\'}' "
        fi
    done
    printf '%s' "${out% }"
}

# --- options -------------------------------------------------------------------------------
DRY_RUN=0
ROOT=""
UNINSTALL=0
PURGE=0
PIN=""
PORT=80
SOURCE=picamera
HOSTNAME_WANTED=vegas-table
KEEP_HOSTNAME=0
CHECKOUT=$(dirname "$DEPLOY_DIR")
SIMULATE=0       # only print commands: --dry-run or --root
USES_PICAMERA=1  # --source picamera[:N]

need_value() { [[ $# -ge 2 && -n $2 ]] || usage_error "$1 needs a value"; }

parse_args() {
    while [[ $# -gt 0 ]]; do
        case $1 in
            --pin) need_value "$@"; PIN=$2; shift 2 ;;
            --pin=*) PIN=${1#*=}; shift ;;
            --port) need_value "$@"; PORT=$2; shift 2 ;;
            --port=*) PORT=${1#*=}; shift ;;
            --source) need_value "$@"; SOURCE=$2; shift 2 ;;
            --source=*) SOURCE=${1#*=}; shift ;;
            --hostname) need_value "$@"; HOSTNAME_WANTED=$2; shift 2 ;;
            --hostname=*) HOSTNAME_WANTED=${1#*=}; shift ;;
            --keep-hostname) KEEP_HOSTNAME=1; shift ;;
            --checkout) need_value "$@"; CHECKOUT=$2; shift 2 ;;
            --checkout=*) CHECKOUT=${1#*=}; shift ;;
            --root) need_value "$@"; ROOT=$2; shift 2 ;;
            --root=*) ROOT=${1#*=}; shift ;;
            --dry-run) DRY_RUN=1; shift ;;
            --uninstall) UNINSTALL=1; shift ;;
            --purge) PURGE=1; shift ;;
            -h|--help) usage; exit 0 ;;
            *) usage_error "unknown option: $1" ;;
        esac
    done

    if [[ -n $PIN && $PIN != auto && ! $PIN =~ ^[0-9]{4,8}$ ]]; then
        usage_error "--pin must be 4 to 8 digits (or auto)"
    fi
    if [[ ! $PORT =~ ^[0-9]{1,5}$ ]] || (( 10#$PORT < 1 || 10#$PORT > 65535 )); then
        usage_error "--port must be a number from 1 to 65535"
    fi
    PORT=$((10#$PORT))
    if [[ ! $SOURCE =~ ^(picamera(:[0-9]+)?|webcam:[0-9]+)$ ]]; then
        usage_error "--source must be picamera, picamera:N or webcam:N"
    fi
    if [[ ! $HOSTNAME_WANTED =~ ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ ]]; then
        usage_error "--hostname must be lower-case letters, digits and inner dashes (e.g. vegas-table)"
    fi
    if (( PURGE && !UNINSTALL )); then
        usage_error "--purge goes with --uninstall"
    fi
    if [[ -n $ROOT ]]; then
        [[ -d $ROOT ]] || die "--root $ROOT: no such directory"
        ROOT=$(cd "$ROOT" && pwd)
        [[ $ROOT != / ]] || ROOT=""
    fi
    # Commands are only printed, not run, in a dry run and when files go under --root.
    SIMULATE=0
    if (( DRY_RUN )) || [[ -n $ROOT ]]; then SIMULATE=1; fi
    USES_PICAMERA=0
    if [[ $SOURCE == picamera* ]]; then USES_PICAMERA=1; fi
}

# --- doing things, or only saying so -------------------------------------------------------
CHANGED=0   # set when a file, the code or the user changed: the service then restarts

# Run a command, or print it in a dry run / under --root.
run() {
    if (( DRY_RUN )); then
        note "would run: $(quote_cmd "$@")"
    elif [[ -n $ROOT ]]; then
        note "not run (--root): $(quote_cmd "$@")"
    else
        note "+ $(quote_cmd "$@")"
        "$@"
    fi
}

# put_file PATH MODE [OWNER]: write stdin to PATH (under --root) unless it is already so.
put_file() {
    local path=$1 mode=$2 owner=${3:-} target content
    target=$ROOT$path
    if [[ -n $ROOT ]]; then owner=""; fi  # no such user under --root: files stay ours
    content=$(cat; printf x)
    content=${content%x}
    if [[ -f $target ]] && [[ $(stat -c %a "$target") == "$mode" ]] \
        && cmp -s "$target" <(printf '%s' "$content"); then
        note "unchanged $path"
        return 0
    fi
    CHANGED=1
    if (( DRY_RUN )); then
        note "would write $path (mode $mode${owner:+, owner $owner}):"
        printf '%s' "$content" | sed 's/^/    | /'
        return 0
    fi
    mkdir -p "$(dirname "$target")"
    local tmp
    tmp=$(mktemp "$target.XXXXXX")
    printf '%s' "$content" >"$tmp"
    chmod "$mode" "$tmp"
    if [[ -n $owner ]]; then chown "$owner" "$tmp"; fi
    mv -f "$tmp" "$target"
    note "wrote $path (mode $mode${owner:+, owner $owner})"
}

# ensure_dir PATH MODE [OWNER]
ensure_dir() {
    local path=$1 mode=$2 owner=${3:-} target
    target=$ROOT$path
    if [[ -n $ROOT ]]; then owner=""; fi
    if [[ -d $target ]]; then
        if [[ $(stat -c %a "$target") != "$mode" ]]; then
            if (( DRY_RUN )); then
                note "would chmod $mode $path"
            else
                chmod "$mode" "$target"
                note "chmod $mode $path"
            fi
        fi
        if [[ -n $owner ]] && [[ $(stat -c %U:%G "$target") != "$owner" ]]; then
            if (( DRY_RUN )); then
                note "would chown -R $owner $path"
            else
                chown -R "$owner" "$target"
                note "gave $path to $owner"
            fi
        fi
        note "exists: $path/"
        return 0
    fi
    if (( DRY_RUN )); then
        note "would create $path/ (mode $mode${owner:+, owner $owner})"
        return 0
    fi
    mkdir -p "$target"
    chmod "$mode" "$target"
    if [[ -n $owner ]]; then chown "$owner" "$target"; fi
    note "created $path/ (mode $mode${owner:+, owner $owner})"
}

remove() {
    local path=$1 target
    target=$ROOT$path
    if [[ ! -e $target && ! -L $target ]]; then
        note "already gone: $path"
        return 0
    fi
    if (( DRY_RUN )); then note "would remove $path"; return 0; fi
    rm -rf -- "$target"
    note "removed $path"
}

# render TEMPLATE: the template with @NAME@ placeholders filled in.
render() {
    sed -e "s|@USER@|$NAME|g" -e "s|@ENV_FILE@|$ENV_FILE|g" -e "s|@DATA_DIR@|$DATA_DIR|g" \
        -e "s|@STATE_DIR@|${DATA_DIR#/var/lib/}|g" -e "s|@VENV@|$VENV|g" \
        -e "s|@SOURCE@|$SOURCE|g" -e "s|@PORT@|$PORT|g" "$DEPLOY_DIR/$1"
}

# --- checks --------------------------------------------------------------------------------
preflight() {
    if ! grep -qs '^name = "vegas-table"' "$CHECKOUT/pyproject.toml"; then
        die "no Vegas Table checkout at $CHECKOUT (run the script from the cloned folder, or give --checkout DIR)"
    fi
    CHECKOUT=$(cd "$CHECKOUT" && pwd)
    for t in vegas-table.service.in avahi-vegas-table.service.in; do
        [[ -f $DEPLOY_DIR/$t ]] || die "$DEPLOY_DIR/$t is missing: the checkout is incomplete"
    done
    if (( !SIMULATE )) && [[ $EUID -ne 0 ]]; then
        die "must run as root: sudo $0 (or add --dry-run to only look)"
    fi
    if [[ -z $ROOT ]]; then
        local model="" codename=""
        [[ -r /proc/device-tree/model ]] && model=$(tr -d '\0' </proc/device-tree/model)
        if [[ $model != *"Raspberry Pi"* ]] && (( USES_PICAMERA )); then
            warn "this is not a Raspberry Pi${model:+ ($model)}: --source $SOURCE needs one (a USB webcam: --source webcam:0)"
        fi
        [[ -r /etc/os-release ]] && codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
        if [[ $codename != bookworm ]]; then
            warn "made for Raspberry Pi OS Bookworm; this is ${codename:-an unknown system}"
        fi
    fi
    if (( !SIMULATE )); then
        command -v systemctl >/dev/null || die "systemd is needed (systemctl not found)"
        if ! (( UNINSTALL )); then
            [[ -x $SYSTEM_PYTHON ]] || die "$SYSTEM_PYTHON not found (sudo apt install python3)"
            "$SYSTEM_PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
                || die "Python 3.11 or newer is needed; Raspberry Pi OS Bookworm has it"
        fi
    fi
}

# --- install steps -------------------------------------------------------------------------
apt_packages() {
    step "System packages"
    # OpenCV comes from PyPI as opencv-python-headless, whose wheel carries its own libraries
    # (no libgl1 or libglib needed); picamera2 must come from apt, matching the Pi's libcamera.
    local want=(python3-venv python3-pip avahi-daemon) missing=() p
    (( USES_PICAMERA )) && want=(python3-picamera2 "${want[@]}")
    for p in "${want[@]}"; do
        if [[ -n $ROOT ]] || ! command -v dpkg-query >/dev/null \
            || [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != "install ok installed" ]]; then
            missing+=("$p")
        fi
    done
    if (( ${#missing[@]} == 0 )); then
        note "already installed: ${want[*]}"
        return 0
    fi
    CHANGED=1
    run apt-get update || die "apt-get update failed: is the Pi online?"
    export DEBIAN_FRONTEND=noninteractive  # no questions from package scripts
    run apt-get install -y --no-install-recommends "${missing[@]}" \
        || die "apt-get could not install ${missing[*]} (python3-picamera2 is only in" \
               "Raspberry Pi OS's package sources; elsewhere use --source webcam:0)"
}

service_user() {
    step "Service user $NAME (groups $NAME, video)"
    if [[ -n $ROOT ]] || ! getent passwd "$NAME" >/dev/null; then
        CHANGED=1
        run useradd --system --user-group --groups video --home-dir "$DATA_DIR" --no-create-home \
            --shell /usr/sbin/nologin --comment "Vegas Table service" "$NAME"
    elif ! id -nG "$NAME" | tr ' ' '\n' | grep -qx video; then
        CHANGED=1
        run usermod --append --groups video "$NAME"
    else
        note "exists, in the group video"
    fi
}

data_dir() {
    step "Saved games in $DATA_DIR"
    ensure_dir "$DATA_DIR" 750 "$NAME:$NAME"
}

# The PIN in the settings file, if there is one: given with --pin, or made up by an older
# installer (which then showed it as the table's PIN, so it stays).
current_pin() {
    local file=$ROOT$ENV_FILE value
    [[ -r $file ]] || return 0
    grep -q '^VEGAS_TABLE_PIN=' "$file" || return 0
    value=$(sed -n 's/^VEGAS_TABLE_PIN=//p' "$file" | tail -n 1)
    if [[ $value =~ ^[0-9]{4,8}$ ]]; then
        printf '%s' "$value"
    else
        # serve refuses such a PIN, which would leave the service failing at every start
        warn "$ENV_FILE holds no valid PIN; leaving it out (the service keeps its own)"
    fi
}

# The command that shows the PIN the service made up and keeps in its data folder.
pin_command() {
    printf 'sudo -u %s %s pin --data-dir %s' "$NAME" "$VENV/bin/vegas-table" "$DATA_DIR"
}

settings() {
    step "Settings in $ENV_FILE"
    local kept
    kept=$(current_pin)
    if [[ $PIN == auto ]]; then
        PIN=""
        note "no PIN here (--pin auto): the service makes one and keeps it in $DATA_DIR"
    elif [[ -n $PIN ]]; then
        note "PIN from --pin"
    elif [[ -n $kept ]]; then
        PIN=$kept
        note "keeping the PIN chosen before (another: --pin N; the service's own: --pin auto)"
    else
        note "no PIN chosen: the service makes one at its first start and keeps it in $DATA_DIR"
    fi
    ensure_dir "$CONF_DIR" 755
    # The PIN goes to the service through this file (root only; systemd reads it), never
    # through the command line, which every user of the machine can see in ps.
    if [[ -n $PIN ]]; then
        put_file "$ENV_FILE" 600 root:root <<EOF
# Vegas Table settings, read by vegas-table.service (EnvironmentFile=).
# Written by deploy/install.sh; to change the PIN: sudo ./deploy/install.sh --pin 4321
# The table PIN unlocks the host's controls on the phones (4 to 8 digits). Chosen here, it
# counts instead of the one the service keeps; sudo ./deploy/install.sh --pin auto drops it.
VEGAS_TABLE_PIN=$PIN
EOF
    else
        put_file "$ENV_FILE" 600 root:root <<EOF
# Vegas Table settings, read by vegas-table.service (EnvironmentFile=).
# Written by deploy/install.sh. No PIN is chosen here, so the service keeps its own in
# $DATA_DIR; to see it, or make a new one (add --new):
#   $(pin_command)
# To choose one: sudo ./deploy/install.sh --pin 4321
EOF
    fi
}

# The venv's python, away from the checkout (whose folders would shadow the installed package).
venv_python() { (cd / && "$VENV/bin/python" "$@"); }

STAGE=""
cleanup() { if [[ -n $STAGE ]]; then rm -rf -- "$STAGE"; fi; }
trap cleanup EXIT

program() {
    local extra="" spec hash
    (( USES_PICAMERA )) && extra="[pi]"
    step "Program: a venv in $VENV with Vegas Table$extra from $CHECKOUT"
    if (( SIMULATE )); then
        run "$SYSTEM_PYTHON" -m venv --system-site-packages "$VENV"
        run "$VENV/bin/python" -m pip install --disable-pip-version-check "<copy of $CHECKOUT>$extra"
        (( USES_PICAMERA )) && note "then, if the venv's numpy 2 cannot load apt's simplejpeg: $(quote_cmd \
            "$VENV/bin/python" -m pip install --no-deps --ignore-installed simplejpeg)"
        return 0
    fi
    # A venv that sees apt's packages: picamera2 and libcamera exist only there.
    if [[ -x $VENV/bin/python ]] && venv_python -c '' 2>/dev/null \
        && grep -qx 'include-system-site-packages = true' "$VENV/pyvenv.cfg"; then
        note "venv exists"
    else
        [[ -e $VENV ]] && note "the venv does not work or cannot see apt's packages: remaking it"
        rm -rf -- "$VENV"
        mkdir -p "$PREFIX"
        run "$SYSTEM_PYTHON" -m venv --system-site-packages "$VENV"
        CHANGED=1
    fi
    # Build from a copy, so that root leaves no build/ or egg-info behind in the user's checkout.
    STAGE=$(mktemp -d)
    tar -C "$CHECKOUT" --exclude=.git --exclude='.venv*' --exclude=.demo-data --exclude=build \
        --exclude=dist --exclude='*.egg-info' --exclude=__pycache__ --exclude='.*_cache' \
        --exclude=.hypothesis --exclude=.ci --exclude=artifacts --exclude=tests --exclude=bench \
        --exclude=deploy -cf - . | tar -C "$STAGE" -xf -
    hash=$( (cd "$STAGE" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum \
        && printf 'extra=%s\n' "$extra") | sha256sum | cut -d' ' -f1)
    if [[ -x $VENV/bin/vegas-table && -f $STAMP && $(cat "$STAMP") == "$hash" ]]; then
        note "Vegas Table is up to date (same sources as last time)"
    else
        note "installing (the first time this downloads about 100 MB and takes a few minutes)"
        spec="$STAGE$extra"
        run "$VENV/bin/python" -m pip install --disable-pip-version-check "$spec"
        printf '%s\n' "$hash" >"$STAMP"
        CHANGED=1
    fi
    cleanup
    STAGE=""
    if (( USES_PICAMERA )); then
        # pip brings numpy 2 for OpenCV; apt's simplejpeg (which picamera2 imports) is built
        # for Bookworm's numpy 1.24 and fails to load with it. PyPI's simplejpeg is built for
        # numpy 2, so the venv gets its own copy, only when needed.
        if ! venv_python -c 'import simplejpeg' 2>/dev/null; then
            run "$VENV/bin/python" -m pip install --disable-pip-version-check --no-deps \
                --ignore-installed simplejpeg
            CHANGED=1
        fi
        local err
        if ! err=$(venv_python -c 'import picamera2' 2>&1); then
            warn "picamera2 does not import in the venv: $(tail -n 1 <<<"$err")"
        fi
    fi
    venv_python -c 'import sys; from vision.valuenet import DEFAULT_MODEL as m; sys.exit(not m.is_file())' \
        || warn "the dice model (vision/models/valuenet.onnx) was not installed: dice are read by the pip rules only"
}

service_unit() {
    step "Service $UNIT_FILE"
    local before=$CHANGED
    CHANGED=0
    put_file "$UNIT_FILE" 644 < <(render vegas-table.service.in)
    local unit_changed=$CHANGED
    CHANGED=$(( before || unit_changed ))
    (( unit_changed )) && run systemctl daemon-reload
    if (( SIMULATE )) || ! systemctl is-enabled --quiet "$NAME.service" 2>/dev/null; then
        run systemctl enable "$NAME.service"
    fi
    # After a crash loop the unit's start limit refuses every start, the restart below too,
    # until the failure is reset: rerunning the installer is how the README says to repair.
    if (( SIMULATE )) || systemctl is-failed --quiet "$NAME.service"; then
        run systemctl reset-failed "$NAME.service"
    fi
    if (( SIMULATE )); then
        run systemctl restart "$NAME.service"
    elif (( CHANGED )) || ! systemctl is-active --quiet "$NAME.service"; then
        run systemctl restart "$NAME.service"
    else
        note "running, nothing changed"
    fi
}

network_name() {
    step "Network name"
    HOST_NAME=$HOSTNAME_WANTED
    if (( KEEP_HOSTNAME )); then
        HOST_NAME=$(cat "$ROOT/etc/hostname" 2>/dev/null || hostname)
        note "keeping the hostname $HOST_NAME (--keep-hostname)"
    else
        # avahi-daemon (on Raspberry Pi OS from the start) answers NAME.local for the machine's
        # hostname; an avahi service file cannot add a second name, so the hostname is it.
        local before=$CHANGED host_changed hosts
        CHANGED=0
        put_file /etc/hostname 644 <<<"$HOST_NAME"
        # sudo and others look the hostname up in /etc/hosts (Debian's 127.0.1.1 line)
        if [[ -f $ROOT/etc/hosts ]]; then
            hosts=$(awk -v name="$HOST_NAME" '
                $1 == "127.0.1.1" { if (!done) print "127.0.1.1\t" name; done = 1; next }
                { print } END { if (!done) print "127.0.1.1\t" name }' "$ROOT/etc/hosts")
            put_file /etc/hosts "$(stat -c %a "$ROOT/etc/hosts")" <<<"$hosts"
        fi
        host_changed=$CHANGED
        CHANGED=$(( before || host_changed ))
        if (( host_changed )); then
            run hostnamectl set-hostname "$HOST_NAME"
            run systemctl restart avahi-daemon.service
        fi
    fi
    put_file "$AVAHI_FILE" 644 < <(render avahi-vegas-table.service.in)
    if (( SIMULATE )) || ! systemctl is-active --quiet avahi-daemon.service; then
        run systemctl enable --now avahi-daemon.service
    fi
}

ANSWERS=0  # set when the service answered the health check

health() {
    (( SIMULATE )) && return 0
    step "Checking the service"
    if ! venv_python - "$PORT" <<'EOF'; then
import json, sys, time, urllib.request
url = f"http://127.0.0.1:{sys.argv[1]}/api/health"
deadline, cam = time.monotonic() + 40, None
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            cam = json.load(r).get("camera", {})
        if cam.get("state") == "running":
            break
    except OSError:
        pass
    time.sleep(1)
if cam is None:
    sys.exit(1)
state = cam.get("state")
print(f"    camera: {state}" + ("" if state == "running" else f" ({cam.get('message')})"))
if state != "running":
    print('    see "The camera is not found" in deploy/README.md')
EOF
        warn "the service does not answer yet: sudo journalctl -u vegas-table -e"
        return 0
    fi
    ANSWERS=1
}

# The table PIN to show at the end: the one chosen here, else the one the service keeps.
table_pin() {
    local out pin=""
    if [[ -n $PIN ]]; then
        printf '%s' "$PIN"
        return 0
    fi
    # Asked only once the service answers: by then it has made its PIN, and this only reads it.
    # As the service user, so that nothing in the data folder comes to belong to root.
    if (( ANSWERS )) && out=$(cd / && runuser -u "$NAME" -- "$VENV/bin/vegas-table" pin \
        --data-dir "$DATA_DIR" 2>/dev/null); then
        # the last number of 4 to 8 digits it prints, whatever words come around it
        if [[ $out =~ (^|[^0-9])([0-9]{4,8})[^0-9]*$ ]]; then pin=${BASH_REMATCH[2]}; fi
    fi
    if [[ -n $pin ]]; then
        printf '%s' "$pin"
    else
        printf 'the service makes one at its first start; see it with: %s' "$(pin_command)"
    fi
}

summary() {
    local port="" ip=""
    if (( PORT != 80 )); then port=":$PORT"; fi
    (( SIMULATE )) || ip=$(hostname -I 2>/dev/null | awk '{print $1}')
    step "Done"
    if (( DRY_RUN )); then note "(dry run: nothing was changed)"; fi
    note "Open on the phones:  http://$HOST_NAME.local$port/"
    if [[ -n $ip ]]; then note "or, if that name does not work:  http://$ip$port/"; fi
    note "Table PIN:  $(table_pin)"
    note "Status: systemctl status $NAME    Log: journalctl -u $NAME -f"
}

install_all() {
    preflight
    apt_packages
    service_user
    data_dir
    settings
    program
    network_name
    service_unit
    health
    summary
}

# --- uninstall -----------------------------------------------------------------------------
uninstall_all() {
    preflight
    step "Stopping and removing the service"
    if [[ -n $ROOT || -e $UNIT_FILE ]]; then
        run systemctl disable --now "$NAME.service"
    fi
    remove "$UNIT_FILE"
    run systemctl daemon-reload
    remove "$AVAHI_FILE"
    step "Program and settings"
    remove "$PREFIX"
    remove "$CONF_DIR"
    step "Service user"
    if [[ -n $ROOT ]] || getent passwd "$NAME" >/dev/null; then
        run userdel "$NAME"
    else
        note "already gone: user $NAME"
    fi
    step "Saved games"
    if (( PURGE )); then
        remove "$DATA_DIR"
    else
        note "kept $DATA_DIR (delete them too: --uninstall --purge)"
    fi
    step "Done"
    (( DRY_RUN )) && note "(dry run: nothing was changed)"
    note "The hostname and the apt packages (python3-picamera2, avahi-daemon, ...) stay;"
    note "rename the Pi with: sudo hostnamectl set-hostname raspberrypi"
}

main() {
    parse_args "$@"
    if (( UNINSTALL )); then
        uninstall_all
    else
        install_all
    fi
}

# Run unless sourced (sourcing gives the functions alone, to try one step by hand).
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    main "$@"
fi
