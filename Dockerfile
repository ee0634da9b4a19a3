# syntax=docker/dockerfile:1
# The agent-memory Temporal worker: `python worker.py`, configured by TEMPORAL_ADDRESS,
# TEMPORAL_NAMESPACE, AGENT_MEMORY_TASK_QUEUE, DATABASE_URL and AGENT_MEMORY_SECRETS_FILE
# (runtime/settings.py). docker-compose.yml's `worker` service builds and runs it; its
# `api` service runs `memoryctl serve` (the HTTP API) from the same image.
#
# Debian release pinned as well as Python's patch version; every dependency ships
# manylinux wheels for x86_64 and aarch64, so no compiler is needed.
FROM python:3.12.13-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# Unprivileged runtime user. /var/lib/agent-memory holds runtime state such as the BYOK
# secrets file; compose mounts a named volume there, which inherits this ownership.
RUN groupadd --system --gid 10001 agent \
    && useradd --system --uid 10001 --gid agent --home-dir /home/agent --create-home \
        --shell /usr/sbin/nologin agent \
    && install -d -o agent -g agent -m 0750 /var/lib/agent-memory

WORKDIR /app

# Dependencies first, in their own layer: it is rebuilt only when pyproject.toml changes.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The project itself: every top-level package and module pyproject.toml lists.
COPY worker.py ./
COPY memory/ memory/
COPY schemas/ schemas/
COPY workflows/ workflows/
COPY activities/ activities/
COPY runtime/ runtime/
COPY memoryctl/ memoryctl/
COPY benchmarks/ benchmarks/
COPY api/ api/
RUN pip install . \
    && rm -rf build ./*.egg-info

USER agent

# The worker handles SIGTERM itself: it stops polling and lets running activities finish.
CMD ["python", "worker.py"]
