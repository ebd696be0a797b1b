"""The container stack's files (docs/deploy/, issue 42), checked without building anything: the
compose file parses and names the services, volumes, health checks and variables docs/DEPLOY.md
promises; each Containerfile takes its base as a build argument, runs as a non-root user and copies
only files that exist; the proxy fills in every placeholder of the nginx site; the app's entry point
writes Streamlit's [auth] secrets from the environment or refuses in one line. The full build and
bring-up is docs/deploy/smoke.sh (not in CI: docs/DEPLOY.md records when it last passed)."""

from __future__ import annotations

import importlib.util
import re
import socket
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import REPO

from evalcore.contract.readers import loads_yaml
from evalcore.storage.paths import default_keys_dir

DEPLOY = REPO / "docs" / "deploy"
CONTAINERFILES = {
    "app": "Containerfile",
    "db": "postgres.Containerfile",
    "proxy": "proxy.Containerfile",
    "oidc": "oidc.Containerfile",
}
OIDC_VARS = [
    "EVALCORE_OIDC_METADATA_URL",
    "EVALCORE_OIDC_CLIENT_ID",
    "EVALCORE_OIDC_CLIENT_SECRET",
    "EVALCORE_OIDC_REDIRECT_URI",
    "EVALCORE_COOKIE_SECRET",
]
MADE_BY_WHEELHOUSE_SH = "build/deploy/wheelhouse"


@pytest.fixture(scope="module")
def compose() -> dict:
    return loads_yaml((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def entrypoint():
    spec = importlib.util.spec_from_file_location("deploy_entrypoint", DEPLOY / "entrypoint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def instructions(name: str) -> list[tuple[str, str]]:
    """A Containerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = re.sub(r"\\\n", " ", (DEPLOY / name).read_text(encoding="utf-8"))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1] if " " in ln else "") for ln in lines]


def test_the_services_are_the_app_postgresql_the_proxy_and_an_optional_login_provider(compose):
    services = compose["services"]
    assert set(services) == {"app", "db", "proxy", "oidc"}
    assert [s for s, v in services.items() if v.get("profiles")] == ["oidc"]  # not started unless asked
    for name, service in services.items():
        build = service["build"]
        assert (DEPLOY / build["context"]).resolve() == REPO, name
        assert build["dockerfile"] == f"docs/deploy/{CONTAINERFILES[name]}"
        assert build["args"] == {"BASE": "${EVALCORE_BASE:-evalcore-base:bookworm}"}, name


def test_the_app_is_configured_by_environment_and_talks_to_the_db_service(compose):
    env = compose["services"]["app"]["environment"]
    assert {"EVALCORE_DATA", "EVALCORE_STATE", "EVALCORE_DB", "EVALCORE_DB_WAIT", *OIDC_VARS} == set(env)
    assert re.fullmatch(r"postgresql://evalcore:\$\{POSTGRES_PASSWORD:\?[^}]+\}@db:5432/evalcore", env["EVALCORE_DB"])
    assert compose["services"]["db"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")


def test_state_and_pairwise_keys_are_separate_volumes_where_evalcore_looks(compose):
    app = compose["services"]["app"]
    mounts = dict(reversed(m.split(":", 1)) for m in app["volumes"])  # target -> volume
    state = Path(app["environment"]["EVALCORE_STATE"])
    data = next(t for t, v in mounts.items() if v == "data")
    # the state directory inside the state volume, not its root: `state restore` writes a new one beside it
    assert mounts[str(state.parent)] == "state"
    assert mounts[str(default_keys_dir(Path(data)))] == "keys"  # evalcore's own rule: <data>-keys
    assert set(compose["volumes"]) == {"state", "data", "keys", "pgdata", "tls"}
    assert compose["services"]["db"]["volumes"] == ["pgdata:/var/lib/postgresql/data"]


def test_health_checks_and_ports(compose):
    services = compose["services"]
    assert "http://127.0.0.1:8501/_stcore/health" in " ".join(services["app"]["healthcheck"]["test"])
    assert "https://127.0.0.1:8443/_stcore/health" in " ".join(services["proxy"]["healthcheck"]["test"])
    assert services["db"]["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]
    assert services["app"]["depends_on"]["db"]["condition"] == "service_healthy"
    # Only the proxy (and the try-out provider) publish a port, on 127.0.0.1 unless told otherwise.
    published = {s: v["ports"] for s, v in services.items() if "ports" in v}
    assert published == {
        "proxy": ["${EVALCORE_PUBLISH:-127.0.0.1:8443}:8443"],
        "oidc": ["127.0.0.1:${EVALCORE_OIDC_PORT:-9400}:${EVALCORE_OIDC_PORT:-9400}"],
    }


@pytest.mark.parametrize("name", sorted(CONTAINERFILES.values()))
def test_each_containerfile_builds_on_the_base_argument_as_a_non_root_user(name):
    ins = instructions(name)
    assert ins[0] == ("ARG", "BASE=evalcore-base:bookworm")
    stages = [arg for kw, arg in ins if kw == "FROM"]
    assert stages and all(re.fullmatch(r"\$\{BASE\}( AS \w+)?", a) for a in stages), stages
    assert stages[-1] == "${BASE}"  # the image is the last stage
    users = [arg for kw, arg in ins if kw == "USER"]
    assert users and users[-1] not in ("root", "0"), f"{name} runs as root"
    assert [kw for kw, _ in ins].index("USER") < [kw for kw, _ in ins].index("ENTRYPOINT")
    for kw, arg in ins:
        if kw == "COPY" and not arg.startswith("--from="):  # (a file of an earlier stage)
            *sources, _target = arg.split()
            for src in sources:
                assert src == MADE_BY_WHEELHOUSE_SH or (REPO / src).exists(), f"{name} copies {src}, which is missing"


def test_the_app_image_has_the_health_check_and_the_volumes():
    ins = dict(instructions("Containerfile"))
    assert "http://127.0.0.1:8501/_stcore/health" in ins["HEALTHCHECK"]
    assert "/var/lib/evalcore/state" in ins["VOLUME"] and "/var/lib/evalcore/data-keys" in ins["VOLUME"]
    assert "EVALCORE_STATE=/var/lib/evalcore/state/current" in ins["ENV"]
    assert "postgresql-client-15" in ins["RUN"]  # pg_dump and pg_restore for `state backup` / `restore`
    assert "USER" in ins and ins["USER"] == "evalcore"


def test_the_proxy_fills_in_every_placeholder_of_the_nginx_site():
    site = set(re.findall(r"\$\{(EVALCORE_[A-Z_]+)\}", (DEPLOY / "nginx.conf").read_text(encoding="utf-8")))
    start = (DEPLOY / "proxy-start.sh").read_text(encoding="utf-8")
    (listed,) = re.findall(r"envsubst '([^']+)'", start)
    assert set(re.findall(r"\$\{(\w+)\}", listed)) == site
    assert all(re.search(rf"^export {v}=", start, re.M) for v in site), "a placeholder is never set"


def test_the_scripts_parse():
    for script in sorted(DEPLOY.glob("*.sh")):
        r = subprocess.run(["sh", "-n", str(script)], capture_output=True, text=True)
        assert r.returncode == 0, f"{script.name}: {r.stderr}"


def test_docs_name_the_variables_volumes_and_scripts(compose):
    text = (REPO / "docs" / "DEPLOY.md").read_text(encoding="utf-8")
    section = text.split("## The container stack", 1)[1].split("\n## ", 1)[0]
    for word in [
        *compose["services"]["app"]["environment"],
        *compose["volumes"],
        "POSTGRES_PASSWORD",
        "EVALCORE_PUBLISH",
        "base.sh",
        "wheelhouse.sh",
        "smoke.sh",
        "--profile oidc",
    ]:
        assert word in section, f"docs/DEPLOY.md's container section does not name {word}"


def test_no_login_variables_means_no_secrets(entrypoint, monkeypatch):
    for var in OIDC_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv(var + "_FILE", "")  # empty counts as unset
    assert entrypoint.auth_section() is None
    assert "--secrets.files" not in entrypoint.streamlit_args(None)


def test_the_login_variables_become_the_auth_section(entrypoint, monkeypatch, tmp_path):
    values = {var: f'v"{i}\\\x01é' for i, var in enumerate(OIDC_VARS)}
    values["EVALCORE_OIDC_REDIRECT_URI"] = "https://evalcore.example.org/oauth2callback"
    secret = tmp_path / "client-secret"
    secret.write_text("from a file\n")
    for var, value in values.items():
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("EVALCORE_OIDC_CLIENT_SECRET")
    monkeypatch.setenv("EVALCORE_OIDC_CLIENT_SECRET_FILE", str(secret))
    got = tomllib.loads(entrypoint.auth_section())["auth"]
    want = {key: values[var] for key, var in entrypoint.AUTH.items() if var != "EVALCORE_OIDC_CLIENT_SECRET"}
    assert got == {**want, "client_secret": "from a file"}
    monkeypatch.setattr(entrypoint.tempfile, "tempdir", str(tmp_path))
    args = entrypoint.streamlit_args(entrypoint.auth_section())
    path = Path(args[args.index("--secrets.files") + 1])
    assert path.parent == tmp_path and path.stat().st_mode & 0o077 == 0
    assert tomllib.loads(path.read_text())["auth"] == got
    assert args[args.index("--server.address") + 1] == "0.0.0.0"


def test_a_partial_login_is_one_line_naming_the_missing_variable(entrypoint, monkeypatch, tmp_path, capsys):
    for var in OIDC_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var + "_FILE", raising=False)
    monkeypatch.setenv("EVALCORE_OIDC_CLIENT_ID", "evalcore")
    monkeypatch.setenv("EVALCORE_OIDC_METADATA_URL", "https://idp.example.org/.well-known/openid-configuration")
    monkeypatch.setattr(entrypoint.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(entrypoint.os, "execvp", lambda *a: pytest.fail("started without a complete login"))
    with pytest.raises(SystemExit) as stop:
        entrypoint.main()
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "error: EVALCORE_OIDC_CLIENT_SECRET is not set or empty (the login needs it with "
        "EVALCORE_OIDC_METADATA_URL, EVALCORE_OIDC_CLIENT_ID)\n"
    )
    assert list(tmp_path.iterdir()) == []  # nothing written
    monkeypatch.setenv("EVALCORE_OIDC_CLIENT_SECRET_FILE", str(tmp_path / "absent"))
    with pytest.raises(entrypoint.ConfigError, match="EVALCORE_OIDC_CLIENT_SECRET_FILE: cannot read .*absent"):
        entrypoint.auth_section()
    for var in OIDC_VARS:
        monkeypatch.setenv(var, "x")
    with pytest.raises(entrypoint.ConfigError, match="EVALCORE_OIDC_REDIRECT_URI must be"):
        entrypoint.auth_section()


def test_the_start_waits_for_postgresql_and_says_when_it_never_answers(entrypoint, monkeypatch):
    entrypoint.wait_for_db(None, 0)  # no database URL: nothing to wait for
    entrypoint.wait_for_db("sqlite:///x", 0)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://evalcore:hunter2@127.0.0.1:{port}/evalcore"
    with pytest.raises(
        entrypoint.ConfigError, match=r"^EVALCORE_DB: PostgreSQL did not accept a connection in 0 s"
    ) as e:
        entrypoint.wait_for_db(url, 0)
    assert "hunter2" not in str(e.value)
    monkeypatch.setenv("EVALCORE_DB_WAIT", "soon")
    with pytest.raises(entrypoint.ConfigError, match="EVALCORE_DB_WAIT must be a number of seconds, not 'soon'"):
        entrypoint.db_wait()
