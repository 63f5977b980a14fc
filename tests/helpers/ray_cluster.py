"""A real Ray cluster on this machine for the Ray tests, and how to watch its nodes' processes.

:func:`cluster` is :class:`ray.cluster_utils.Cluster`: a head and a second node, each a real
raylet with its own worker processes (one CPU each), as ``ray start --head`` and ``ray start
--address`` would start them. Each run under test connects to it (``ray.init``) and
disconnects, as ``hearts`` does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MB = 1024 * 1024
#: Each node's resources: one CPU (one game at a time), a small object store, no dashboard.
NODE = {"num_cpus": 1, "object_store_memory": 80 * MB}


@pytest.fixture(scope="module")
def ray_module() -> Any:
    return pytest.importorskip("ray", reason="Ray is not installed (make install adds the ray extra)")


@pytest.fixture(scope="module")
def cluster(ray_module: Any) -> Iterator[Any]:
    """A head and one more node, one CPU each."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    try:
        cluster.add_node(**NODE)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


def raylet_pid(node: Any) -> int:
    """The pid of a cluster node's raylet (its workers, and their bots, run under it)."""
    return int(node.all_processes["raylet"][0].process.pid)


def command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def open_files(pid: int) -> list[str]:
    """The paths of the files ``pid`` holds open (none when it is gone)."""
    out = []
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                out.append(str(fd.readlink()))
            except OSError:
                continue
    except OSError:
        return []
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie is dead: it only waits to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def same_games(played: dict[str, Any], reference: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The games whose results differ from the reference's: key -> (played, reference), whole.

    Empty when the two agree. Asserted ``== {}``, a failure shows every field of each differing
    game (its faults and retirements included), not pytest's shortened tuples.
    """
    return {
        key: (played.get(key), reference.get(key))
        for key in sorted(played.keys() | reference.keys())
        if played.get(key) != reference.get(key)
    }


def seat_logs(folder: Path) -> int:
    """How many seats of games the bot logs in `folder` show played (by their ``game_started`` lines).

    Counted by content, not by file: a bot killed by a signal before it joins is started again
    (docs/TOURNAMENTS.md, Faulty bots), and each of its processes leaves a log of its own (empty,
    or `...-again.log`, or a warm process's next serial) for the same seat.
    """
    started = re.compile(r"game_started game_id='(\w+)' seat=(\d+)")
    return len({m.groups() for p in folder.glob("*.log") for m in started.finditer(p.read_text())})
