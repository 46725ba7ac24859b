#!/usr/bin/env bash
# +cred:NAME: a secret (or a URL) from the credential NAME that systemd's
# LoadCredential= put in $CREDENTIALS_DIRECTORY, on the command line, as
# a key and in a --config file (where no directory is put before it);
# refused with a message saying what to do without the variable, with a
# name that is not a file name, or a credential that is not there.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

password='pw-Cred3ntial-41ab'
mkdir www creds conf
make_image www/disk.img 1M
printf 'alice:{PLAIN}%s\n' "$password" > htpasswd
start_nginx "$tmp/www" "" "auth_basic \"nbdcurld test\"; auth_basic_user_file $tmp/htpasswd;"
url=$NGINX_URL/disk.img
# As systemd leaves them: a directory of files only the service may read.
printf '%s\n' "$password" > creds/web-password
printf '%s\n' "$url" > creds/image-url
chmod 0500 creds
chmod 0400 creds/*

copy() {
    local log=$1
    shift
    rm -f out.img
    "$NBDCURLD" -r "$@" --run 'nbdcopy "$uri" out.img' 2>"$log" ||
        fail "$*: $(tail -n 3 "$log")"
    [ "$(md5_of out.img)" = "$(md5_of www/disk.img)" ] || fail "$*: the copy differs"
    ! grep -q -- "$password" "$log" || fail "$*: the password is in the log"
}
export CREDENTIALS_DIRECTORY=$tmp/creds
copy option.log --auth-user alice --auth-password +cred:web-password "$url"
copy key.log "$url" user=alice password=+cred:web-password
copy url.log --auth-user alice --auth-password +cred:web-password --export disk=+cred:image-url

# In a configuration file in another directory: the credential, not a
# file next to the configuration.
cat > conf/nbdcurld.conf <<CONF
auth-user = alice
auth-password = +cred:web-password
[export disk]
url = +cred:image-url
CONF
chmod 0644 conf/nbdcurld.conf
copy conf.log --config "$tmp/conf/nbdcurld.conf"

# refused PATTERN ARGS...: nbdcurld ARGS fails, saying PATTERN.
refused() {
    local pattern=$1
    shift
    expect_fail "$NBDCURLD" -r "$@" --run true </dev/null 2>err.log
    grep -qE -- "$pattern" err.log || fail "$*: \"$(cat err.log)\" does not match /$pattern/"
}
refused "creds/missing: No such file" --auth-user alice --auth-password +cred:missing "$url"
refused "a file name of 1 to" --auth-user alice --auth-password +cred:../web-password "$url"
refused "a file name of 1 to" --auth-user alice --auth-password +cred: "$url"
unset CREDENTIALS_DIRECTORY
refused 'CREDENTIALS_DIRECTORY is not set.*LoadCredential=web-password:' \
    --auth-user alice --auth-password +cred:web-password "$url"
refused 'CREDENTIALS_DIRECTORY is not set' --export disk=+cred:image-url
CREDENTIALS_DIRECTORY=relative refused 'not an absolute path' \
    --auth-user alice --auth-password +cred:web-password "$url"
echo ok
