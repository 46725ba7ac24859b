# nginx.sh: the parts of an nginx configuration every private nginx of the
# tests, the benchmark and the quick start shares.  Sourced; each caller
# adds its own worker, user, listen and tuning lines.

# nginx_main_conf DIR: main-context lines: foreground, pid and error log
# in DIR.
nginx_main_conf() {
    printf 'daemon off;\npid %s/nginx.pid;\nerror_log %s/nginx-error.log;\n' "$1" "$1"
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
