"""The deployment without containers (docs/DEPLOY.md, "Without containers"): two app servers bound to
127.0.0.1 over one PostgreSQL, Debian's nginx in front of them with TLS, filled in from
docs/deploy/nginx.conf, and a login through a real OpenID Connect provider whose redirect comes back
on the https URL.

* ``test_a_login_through_the_proxy_decides_a_case_into_postgresql``: Chromium opens
  https://127.0.0.1:N/, is sent to the provider, logs in, comes back over https, opens the Review
  page, decides a case with its key, and the decision is read back from PostgreSQL and from the
  labels CSV the page's download button serves through the proxy. nginx's access
  log shows every request of the browser carried the routing cookie after the first and reached one
  app server (the sticky sessions of the template); a WebSocket upgrade as ``evalcore.test:N`` is
  accepted from its own origin and refused from another (the Host reaches the app with its port).
* ``test_a_redirect_uri_on_the_apps_own_port_gives_no_login_through_the_proxy``: the control of the
  https redirect_uri.
* ``test_the_command_line_address_overrides_the_config_file``: ``--server.address`` and the
  proxy settings given on the command line are what Streamlit runs with, over .streamlit/config.toml.
* ``test_the_site_fits_in_debians_own_nginx_conf``: the filled-in site passes ``nginx -t`` inside
  Debian's /etc/nginx/nginx.conf.
* ``test_the_systemd_unit_is_one_systemd_accepts``: docs/deploy/evalcore.service passes
  ``systemd-analyze verify`` (skips without systemd).

Without nginx, openssl or chromium the browser tests skip, unless EVALCORE_REQUIRE_BROWSER=1 (set by
.ci/run, which installs nginx and openssl); without PostgreSQL the first skips, unless
EVALCORE_REQUIRE_PG=1.
"""

from __future__ import annotations

import base64
import csv
import gzip
import io
import os
import pwd
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, NamedTuple

import pytest
from browser_util import (
    REPO,
    auth_secrets,
    card_case,
    card_choices,
    card_decide,
    card_key,
    card_saved,
    free_port,
    guard_page,
    log_in,
    start_app,
    start_oidc_provider,
    streamlit_bin,
    unavailable,
    wait_idle,
)
from queue_world import make_queue_world

from evalcore import Store
from evalcore import review as R

TEMPLATE = REPO / "docs" / "deploy" / "nginx.conf"
REVIEWER = "rita@example.org"
USERS = {REVIEWER: {"email": REVIEWER, "name": "Rita Reviewer", "roles": ["reviewer"]}}
PROVIDER_CSS = "https://cdn.jsdelivr.net/npm/@picocss/"  # the provider's own form links it; aborted
LOG_FORMAT = "$upstream_addr $status $cookie_evalcore_route $upstream_cache_status $request_uri"

# The main configuration of the throwaway nginx: its pid, logs and temporary files under one
# directory; the site is the template, filled in.
MAIN = """pid {d}/nginx.pid;
error_log {d}/error.log info;
worker_processes 1;
events {{ worker_connections 256; }}
http {{
    log_format evalcore '{log_format}';
    access_log {d}/access.log evalcore;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    include {d}/evalcore.conf;
}}
"""


def fill(template: str, values: dict[str, str]) -> str:
    """The template with each ``${NAME}`` replaced (as envsubst does); every placeholder must be given."""
    out = template
    for name, value in values.items():
        assert "${" + name + "}" in out, f"{name} is not a placeholder of {TEMPLATE}"
        out = out.replace("${" + name + "}", value)
    left = re.findall(r"\$\{\w+\}", out)
    assert not left, f"placeholders of {TEMPLATE} not filled in: {left}"
    return out


def nginx_bin() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if found is None:
        unavailable("Debian's nginx is not installed (apt-get install nginx)")
    return str(found)


def self_signed(d: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by openssl as docs/DEPLOY.md says."""
    if shutil.which("openssl") is None:
        unavailable("openssl is not installed (apt-get install openssl)")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def insecure_tls() -> ssl.SSLContext:
    """A client's TLS context that does not check the certificate (the tests' nginx is self-signed)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60.0) -> None:
    """Wait until ``url`` answers 200 through the proxy (the certificate is not checked: self-signed)."""
    insecure = insecure_tls()
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"nginx exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2, context=insecure) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer 200 through nginx in {timeout}s: {log.read_text()[-2000:]}")
        time.sleep(0.1)


@contextmanager
def start_nginx(apps: list[str], port: int) -> Iterator[Path]:
    """Debian's nginx in the foreground on 127.0.0.1:``port`` with TLS in front of ``apps``
    (host:port each); yields its directory (access.log, error.log) and stops it afterwards."""
    exe = nginx_bin()
    d = Path(tempfile.mkdtemp(prefix="evalcore-nginx-"))
    try:
        (d / "tmp").mkdir()
        cert, key = self_signed(d)
        site = fill(
            TEMPLATE.read_text(encoding="utf-8"),
            {
                "EVALCORE_SERVER_NAME": "127.0.0.1",
                "EVALCORE_LISTEN": f"127.0.0.1:{port}",
                "EVALCORE_CERT": str(cert),
                "EVALCORE_KEY": str(key),
                "EVALCORE_APP_SERVERS": " ".join(f"server {a};" for a in apps),
                "EVALCORE_CACHE": str(d / "cache"),
            },
        )
        (d / "evalcore.conf").write_text(site, encoding="utf-8")
        (d / "nginx.conf").write_text(MAIN.format(d=d, log_format=LOG_FORMAT), encoding="utf-8")
        if os.geteuid() == 0:  # nginx's workers run as nobody: they write the temporary files
            nobody = pwd.getpwnam("nobody")
            for p in (d, d / "tmp"):  # (nginx makes the cache directory itself, for its workers)
                os.chown(p, nobody.pw_uid, nobody.pw_gid)
        cmd = [exe, "-p", str(d), "-e", str(d / "error.log"), "-c", str(d / "nginx.conf")]
        checked = subprocess.run([*cmd, "-t"], capture_output=True, text=True)
        assert checked.returncode == 0, f"nginx -t refused the filled-in template: {checked.stderr}"
        with open(d / "stderr.log", "wb") as out:
            proc = subprocess.Popen([*cmd, "-g", "daemon off;"], stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_healthy(f"https://127.0.0.1:{port}/_stcore/health", proc, d / "error.log")
            yield d
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    finally:
        shutil.rmtree(d, ignore_errors=True)


def ws_handshake(port: int, host: str, origin: str) -> str:
    """The status line nginx answers a WebSocket upgrade of /_stcore/stream with, sent as a browser
    at ``origin`` sends it to ``host``."""
    insecure = insecure_tls()
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: streamlit\r\n"
        f"Origin: {origin}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        with insecure.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            s.sendall(request.encode())
            answer = b""
            while b"\r\n" not in answer:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
    return answer.split(b"\r\n", 1)[0].decode()


def decisions(url: str) -> list[tuple]:
    """The label store's edits, read from PostgreSQL itself."""
    import psycopg

    with psycopg.connect(url) as con:
        return con.execute(
            "SELECT gen_id, item_id, gen_round, criterion, value, outcome, reviewer FROM edits ORDER BY edit_id"
        ).fetchall()


class Proxied(NamedTuple):
    upstream: str  # the app server nginx passed the request to ("-": none, answered from its cache)
    status: str
    cookie: str  # the routing cookie the request carried ("-": none)
    cache: str  # HIT or MISS for the front end's files, else "-"
    uri: str


def access_log(d: Path) -> list[Proxied]:
    """The requests nginx answered, in order."""
    return [Proxied(*line.split(" ", 4)) for line in (d / "access.log").read_text().splitlines()]


@pytest.mark.browser
def test_a_login_through_the_proxy_decides_a_case_into_postgresql(browser, tmp_path, pg_url, monkeypatch):
    monkeypatch.setenv("EVALCORE_DB", pg_url)  # the app servers (and this test's Store) use PostgreSQL
    data = make_queue_world(tmp_path / "data")
    state = tmp_path / "state"
    store = Store(data, state)
    R.build_queue(store, "qg", audit_rate=1.0, seed=3, reviewers_required=1)
    assert decisions(pg_url) == []  # the queue is in PostgreSQL, and nothing is decided yet
    port = free_port()
    base = f"https://127.0.0.1:{port}"
    ports = [free_port(), free_port()]
    outside: list[str] = []
    with start_oidc_provider(USERS) as issuer:
        local = 'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"'
        secrets = auth_secrets(issuer)
        assert local in secrets
        secrets = secrets.replace(local, f'redirect_uri = "{base}/oauth2callback"')  # back through nginx
        with (
            start_app(data, state, port=ports[0], secrets=secrets),
            start_app(data, state, port=ports[1], secrets=secrets),
            start_nginx([f"127.0.0.1:{p}" for p in ports], port) as d,
        ):
            ctx = browser.new_context(ignore_https_errors=True, viewport={"width": 1400, "height": 900})
            page = ctx.new_page()
            guard_page(page, outside)
            sent_to: list[str] = []
            page.on("request", lambda r: sent_to.append(r.url) if r.is_navigation_request() else None)
            page.goto(base)
            page.get_by_role("button", name="Log in").first.wait_for(timeout=90_000)  # a cold server, a busy machine
            log_in(page, base, REVIEWER)
            assert any(u.startswith(issuer) for u in sent_to), "the browser was not sent to the provider"
            assert any(u.startswith(f"{base}/oauth2callback") for u in sent_to), "the callback was not over https"
            assert page.url.startswith(base)
            page.goto(f"{base}/review?gen=qg")
            case = card_key(card_case(page))
            value = card_choices(page)[0]
            card_decide(page, value)
            card_saved(page)
            # a download is served by the app server that holds the session: it comes through nginx
            wait_idle(page)
            with page.expect_download(timeout=60_000) as got:
                page.get_by_role("button", name="Download labels (CSV").click(timeout=60_000)
            exported = list(csv.DictReader(io.StringIO(Path(got.value.path()).read_text(encoding="utf-8"))))
            ctx.close()
            proxied = access_log(d)
            # a name other than 127.0.0.1 on a port other than 443: the proxy hands the app the Host
            # with its port, so the page's own origin is accepted and any other refused (CORS stays on)
            named = f"evalcore.test:{port}"
            same, foreign = (
                ws_handshake(port, named, f"https://{named}"),
                ws_handshake(port, named, "https://elsewhere.example"),
            )
    assert [u for u in outside if not u.startswith(PROVIDER_CSS)] == []
    item, rnd, crit = case
    assert decisions(pg_url) == [("qg", item, rnd, crit, value, "decided", REVIEWER)]
    assert [(r["item_id"], int(r["gen_round"]), r["criterion"], r["value"], r["reviewer"]) for r in exported] == [
        (item, rnd, crit, value, REVIEWER)
    ]
    # sticky: after the first request every request carried one routing cookie and reached one app server
    ready = next(k for k, r in enumerate(proxied) if r.uri != "/_stcore/health")  # the readiness checks
    seen = proxied[ready:]
    cookies = {r.cookie for r in seen[1:]}
    assert seen[0].cookie == "-" and len(cookies) == 1 and "-" not in cookies, (seen[0], cookies)
    assert len({r.upstream for r in seen if r.upstream != "-"}) == 1, {r.upstream for r in seen}
    assert [r for r in seen if r.status.startswith("5")] == []  # (a 404 is the page probing /review/_stcore/)
    assert any(r.uri.startswith("/_stcore/stream") for r in seen)  # the WebSocket went through nginx
    assert any(r.uri.startswith("/oauth2callback") for r in seen)
    assert {r.status for r in seen if r.uri.startswith("/media/")} == {"200"}  # the download
    assert same.split()[1] == "101", same
    assert foreign.split()[1] == "403", foreign


@pytest.mark.browser
def test_a_redirect_uri_on_the_apps_own_port_gives_no_login_through_the_proxy(browser, tmp_path):
    """The control of the https redirect_uri: with the app's own http://127.0.0.1:APP/oauth2callback,
    the login comes back to the app's port, and the same browser at the https URL through nginx
    gets the log-in page: Streamlit ties a login to the redirect_uri's origin ("Origin mismatch")."""
    data = make_queue_world(tmp_path / "data")
    port, app = free_port(), free_port()
    outside: list[str] = []
    with (
        start_oidc_provider(USERS) as issuer,
        start_app(data, tmp_path / "state", port=app, secrets=auth_secrets(issuer)),
        start_nginx([f"127.0.0.1:{app}"], port),
    ):
        ctx = browser.new_context(ignore_https_errors=True)
        page = ctx.new_page()
        guard_page(page, outside)
        page.goto(f"https://127.0.0.1:{port}")
        page.get_by_role("button", name="Log in").first.wait_for(timeout=60_000)
        wait_idle(page)
        page.get_by_role("button", name="Log in").first.click()
        page.get_by_role("button", name=REVIEWER, exact=True).click(timeout=30_000)
        page.wait_for_url(lambda u: u.startswith(f"http://127.0.0.1:{app}/"), timeout=30_000)
        page.get_by_text("Logged in as").wait_for(timeout=30_000)  # logged in on the app's own port
        page.goto(f"https://127.0.0.1:{port}/")
        page.get_by_role("button", name="Log in").first.wait_for(timeout=30_000)
        wait_idle(page)
        assert page.get_by_text("Logged in as").count() == 0
        ctx.close()
    assert [u for u in outside if not u.startswith(PROVIDER_CSS)] == []
    assert "Origin mismatch" in (tmp_path / f"streamlit-{app}.log").read_text()


def fetch(url: str, compressed: bool = False) -> tuple[dict[str, str], bytes]:
    """GET ``url`` (the certificate is not checked: self-signed): its headers and its body as sent."""
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip, br"} if compressed else {})
    with urllib.request.urlopen(req, timeout=60, context=insecure_tls()) as r:
        return {k.lower(): v for k, v in r.headers.items()}, r.read()


def test_the_front_ends_files_come_from_nginx_compressed_and_once_from_the_app(tmp_path):
    """The template's /static/ location: the app sends the front end's main bundle uncompressed even
    to a browser that accepts gzip (Streamlit leaves its static files out of its gzip on purpose);
    through nginx, asked for three times, it comes gzip-compressed, its bytes the app's own once
    uncompressed, with Streamlit's immutable Cache-Control kept, and it reached the app once (one
    MISS, then two HITs in nginx's access log)."""
    data = make_queue_world(tmp_path / "data")
    port, app = free_port(), free_port()
    with start_app(data, tmp_path / "state", port=app) as direct, start_nginx([f"127.0.0.1:{app}"], port) as d:
        _, html = fetch(f"https://127.0.0.1:{port}/")
        found = re.search(rb'src="\.?/?(static/js/index\.[\w-]+\.js)"', html)
        assert found, html[:2000]
        js = found.group(1).decode()
        own_headers, own = fetch(f"{direct}/{js}", compressed=True)
        got = [fetch(f"https://127.0.0.1:{port}/{js}", compressed=True) for _ in range(3)]
        deadline = time.monotonic() + 60  # nginx logs a request once its response is sent
        while len(log := [r for r in access_log(d) if r.uri == "/" + js]) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert "content-encoding" not in own_headers and len(own) > 100_000, (own_headers, len(own))
    for headers, body in got:
        assert headers.get("content-encoding") == "gzip", headers
        assert gzip.decompress(body) == own
        assert "immutable" in headers.get("cache-control", ""), headers
    print(f"{js}: {len(own):,} bytes from the app, {len(got[0][1]):,} through nginx")
    assert len(got[0][1]) < len(own) / 2
    assert [r.cache for r in log] == ["MISS", "HIT", "HIT"], log
    assert [r.upstream for r in log][1:] == ["-", "-"], log


def test_the_command_line_address_overrides_the_config_file():
    """.streamlit/config.toml binds 127.0.0.1; ``--server.address`` (and the proxy settings beside
    it) on the command line win over it: ``streamlit config show`` in the repository prints what
    ``streamlit run app.py`` with the same options runs with."""
    r = subprocess.run(
        [
            streamlit_bin(),
            "config",
            "show",
            "--server.address",
            "10.1.2.3",
            "--server.port",
            "8600",
            "--browser.serverAddress",
            "evalcore.example.org",
            "--browser.serverPort",
            "443",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    shown = dict(re.findall(r'^(address|port|serverAddress|serverPort) = "?([^"\n]+)"?$', r.stdout, flags=re.M))
    assert shown == {
        "address": "10.1.2.3",
        "port": "8600",
        "serverAddress": "evalcore.example.org",
        "serverPort": "443",
    }
    plain = subprocess.run([streamlit_bin(), "config", "show"], cwd=REPO, capture_output=True, text=True, check=True)
    assert re.search(r'^address = "127\.0\.0\.1"$', plain.stdout, flags=re.M)  # the file's own


def test_the_site_fits_in_debians_own_nginx_conf(tmp_path):
    """The filled-in site, put where Debian's /etc/nginx/nginx.conf includes sites-enabled/, passes
    ``nginx -t`` (Debian's main file sets its own TLS protocols, gzip and logs around it); the pid
    and log paths are moved into the test's directory."""
    exe = nginx_bin()
    debian = Path("/etc/nginx/nginx.conf")
    if not debian.exists():
        unavailable("Debian's /etc/nginx/nginx.conf is missing (apt-get install nginx)")
    cert, key = self_signed(tmp_path)
    site = fill(
        TEMPLATE.read_text(encoding="utf-8"),
        {
            "EVALCORE_SERVER_NAME": "evalcore.example.org",
            "EVALCORE_LISTEN": f"127.0.0.1:{free_port()}",
            "EVALCORE_CERT": str(cert),
            "EVALCORE_KEY": str(key),
            "EVALCORE_APP_SERVERS": "server 127.0.0.1:8501; server 127.0.0.1:8502;",
            "EVALCORE_CACHE": str(tmp_path / "cache"),
        },
    )
    (tmp_path / "evalcore").write_text(site, encoding="utf-8")
    main = debian.read_text(encoding="utf-8")
    assert "include /etc/nginx/sites-enabled/*;" in main
    main = main.replace("include /etc/nginx/sites-enabled/*;", f"include {tmp_path}/evalcore;")
    main = re.sub(r"^pid .*;$", f"pid {tmp_path}/nginx.pid;", main, flags=re.M)
    main = main.replace("/var/log/nginx/", f"{tmp_path}/")
    (tmp_path / "nginx.conf").write_text(main, encoding="utf-8")
    r = subprocess.run(
        [exe, "-t", "-e", str(tmp_path / "error.log"), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


def test_the_systemd_unit_is_one_systemd_accepts(tmp_path):
    """docs/deploy/evalcore.service, installed as a template (evalcore@.service) with this checkout
    for /opt/evalcore, passes ``systemd-analyze verify`` for the instance of port 8501: every key is
    one systemd knows and ExecStart names an executable (the streamlit of this .venv)."""
    exe = shutil.which("systemd-analyze")
    if exe is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package)")
    unit = (REPO / "docs" / "deploy" / "evalcore.service").read_text(encoding="utf-8")
    assert "/opt/evalcore/.venv/bin/streamlit run app.py --server.address 127.0.0.1 --server.port %i" in unit
    (tmp_path / "evalcore@.service").write_text(unit.replace("/opt/evalcore", str(REPO)), encoding="utf-8")
    r = subprocess.run([exe, "verify", str(tmp_path / "evalcore@8501.service")], capture_output=True, text=True)
    assert (r.returncode, r.stdout + r.stderr) == (0, "")
