# nginx.sh: what every private nginx of the tests, the benchmark and the
# quick start shares: the common parts of its configuration, and starting
# it on a free port (nginx_launch).  Sourced; each caller adds its own
# listen and tuning lines.

source "$(dirname "${BASH_SOURCE[0]}")/process.sh"

# nginx_main_conf DIR: main-context lines: foreground, pid and error log
# in DIR.
nginx_main_conf() {
    printf 'daemon off;\npid %s/nginx.pid;\nerror_log %s/nginx-error.log;\n' "$1" "$1"
}

# nginx_head DIR WORKERS CONNECTIONS: nginx_main_conf's lines, then a
# master process with WORKERS workers of CONNECTIONS connections each.
# As root the workers stay root, so they can read any test directory; as
# another user nginx ignores "user", and the directory is that user's.
nginx_head() {
    nginx_main_conf "$1"
    printf 'master_process on;\nworker_processes %s;\n' "$2"
    [ "$(id -u)" -ne 0 ] || echo "user root;"
    printf 'events { worker_connections %s; }\n' "$3"
}

# nginx_http_conf DIR: http-context lines: no access log, every temporary
# path in DIR (the defaults are system directories), and images served
# as plain bytes.
nginx_http_conf() {
    local d=$1
    cat <<EOF
    access_log off;
    client_body_temp_path $d/nginx-body;
    proxy_temp_path $d/nginx-proxy;
    fastcgi_temp_path $d/nginx-fastcgi;
    uwsgi_temp_path $d/nginx-uwsgi;
    scgi_temp_path $d/nginx-scgi;
    default_type application/octet-stream;
EOF
}

# free_port: print a TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
    /usr/bin/python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# nginx_launch DIR CONF_FUNCTION: start nginx in the background with
# DIR as its prefix (configuration, pid file, error log, temporary files)
# on a free port of 127.0.0.1; CONF_FUNCTION PORT prints the whole
# configuration.  A port free a moment ago may be taken by another
# program before nginx binds it: then another is tried.  Sets NGINX_PORT
# and NGINX_PID and returns 0 once nginx accepts connections; returns 1
# (nginx stopped, NGINX_PID empty) if it never does: DIR/nginx-error.log
# says why.
nginx_launch() {
    local dir=$1 conf_fn=$2 attempt i
    for attempt in 1 2 3 4 5; do
        NGINX_PORT=$(free_port)
        rm -f "$dir/nginx.pid"
        "$conf_fn" "$NGINX_PORT" > "$dir/nginx.conf"
        # -e: the error log before the configuration is read, not
        # /var/log/nginx.
        /usr/sbin/nginx -p "$dir" -e "$dir/nginx-error.log" \
            -c "$dir/nginx.conf" </dev/null >/dev/null 2>&1 &
        NGINX_PID=$!
        # nginx writes its pid file only after binding its sockets.
        # Looked for every 20 ms, for up to 10 s.
        for i in $(seq 500); do
            kill -0 "$NGINX_PID" 2>/dev/null || break
            if [ -s "$dir/nginx.pid" ] &&
                    (exec 3<>"/dev/tcp/127.0.0.1/$NGINX_PORT") 2>/dev/null; then
                return 0
            fi
            sleep 0.02
        done
        stop_pid "$NGINX_PID"
    done
    NGINX_PID=""
    return 1
}
