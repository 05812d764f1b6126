"""The engine and the language server make no network connections (issue 8).

In-process: every socket entry point of the standard library refuses and records while an
index pass (with the embedding model) and a find run. Out of process: the real server runs
under ``support/net_guard.py`` (an audit hook that refuses and logs each connect, bind, send
and name lookup), and after a session its open sockets are looked up in ``/proc``: none may
have a remote address other than loopback.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import ClientServerConfig

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from support import ROOT
from support.lsp import find, initialize, make_client, ready, server_env, stop
from support.procnet import socket_rows


def test_engine_index_and_find_touch_no_socket(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[str] = []

    def refuse(name: str) -> Any:
        def _refuse(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{name} {args[1:] if name.startswith('socket.') else args}")
            raise OSError(f"network refused in test: {name}")

        return _refuse

    for name in ("connect", "connect_ex", "sendto", "bind"):
        monkeypatch.setattr(socket.socket, name, refuse(f"socket.{name}"))
    for name in ("getaddrinfo", "gethostbyname", "create_connection"):
        monkeypatch.setattr(socket, name, refuse(name))
    with Engine(project, tmp_path / "idx") as eng:
        report = eng.index()
        res = eng.find(FindRequest("where is the oauth state checked"))
    assert report.chunks_total > 0 and report.embedded + report.vectors_from_cache > 0
    assert res.results[0].path == "src/shop/oauth.py"
    assert attempts == []


def _remote_addresses(pid: int) -> list[str]:
    """Remote ends of the inet sockets ``pid`` holds (from /proc), loopback and unbound
    excluded."""
    found = []
    for table, cols in socket_rows(pid, ("tcp", "tcp6", "udp", "udp6")):
        remote = cols[2].split(":")[0]
        loopback = remote in ("0100007F", "00000000000000000000000001000000")
        if remote.strip("0") and not loopback:
            found.append(f"{table} {cols[1]} -> {cols[2]}")
    return found


@pytest.mark.asyncio
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_language_server_makes_no_network_connections(project: Path, tmp_path: Path) -> None:
    log = tmp_path / "net.log"
    env = server_env()
    env["CE_NET_LOG"] = str(log)
    config = ClientServerConfig(
        server_command=[
            sys.executable,
            str(ROOT / "tests" / "support" / "net_guard.py"),
            "serve",
            "--index-dir",
            str(tmp_path / "idx"),
        ],
        client_factory=make_client,
        server_env=env,
    )
    client = await config.start()
    try:
        await initialize(client, project)
        await ready(client)
        answer = await find(client, {"query": "discount_for voucher code"})
        assert answer["results"][0]["path"] == "src/shop/pricing.py"
        await asyncio.sleep(0.2)
        assert _remote_addresses(client._server.pid) == []  # type: ignore[attr-defined]
    finally:
        await stop(client)
    assert not log.exists() or log.read_text() == ""
