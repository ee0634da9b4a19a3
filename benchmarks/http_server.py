"""The HTTP API in its own process, for benchmarks/http_bench.py: the same app and uvicorn
settings as ``memoryctl serve`` (api/serve.py), over the database named by DATABASE_URL,
with no Temporal server (the connector raises, so discovery reports Temporal and the
worker unavailable).

    DATABASE_URL=postgresql+asyncpg://... python -m benchmarks.http_server --port 8123

Prints ``http server ready on 127.0.0.1:<port>`` once it accepts connections; SIGTERM
stops it. It neither migrates nor seeds: the benchmark has done both.
"""

from __future__ import annotations

import argparse
import asyncio

from temporalio.client import Client

from api.app import create_app
from api.services import ApiServices
from memory.redaction.vault import vault_from_settings
from memory.storage.engines import create_engine, database_url_from_env
from runtime.http_serving import uvicorn_server
from runtime.settings import Settings

HOST = "127.0.0.1"


async def temporal_unavailable() -> Client:
    """The Temporal connector of a host whose Temporal is down: every probe fails."""
    raise ConnectionError("no Temporal server in this benchmark")


async def serve(port: int) -> None:
    settings = Settings()
    # create_engine's default pool (10 + 10 overflow), as memoryctl serve builds it.
    engine = create_engine(settings.database_url or database_url_from_env())
    try:
        services = ApiServices.build(
            settings, engine, vault_from_settings(settings.secrets_file), temporal_unavailable
        )
        server = uvicorn_server(create_app(services), HOST, port)
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("uvicorn stopped before it started")
            await asyncio.sleep(0.01)
        print(f"http server ready on {HOST}:{port}", flush=True)
        await task
    finally:
        await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True)
    asyncio.run(serve(parser.parse_args().port))


if __name__ == "__main__":
    main()
