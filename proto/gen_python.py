#!/usr/bin/env python3
"""Regenerates the Python code of the protocol into proto/python/cancellation_hearts/v1.

Run from anywhere: ``python proto/gen_python.py`` (``make proto``). With ``--out DIR`` it writes
into DIR instead, which the staleness test uses to compare against the committed code.
Generation uses the pinned grpcio-tools (protoc, the gRPC plugin) and mypy-protobuf for stubs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = Path("cancellation_hearts") / "v1"
DEFAULT_OUT = ROOT / "proto" / "python"


def generate(out_root: Path) -> list[Path]:
    """Generates every .proto under proto/cancellation_hearts/v1 into ``out_root``.

    Returns:
        The files written, relative to ``out_root``.
    """
    protos = sorted((PROTO_ROOT / PACKAGE).glob("*.proto"))
    # mypy-protobuf's plugins (protoc-gen-mypy, protoc-gen-mypy_grpc) sit beside this Python.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{Path(protoc.__file__).parent / '_proto'}",
            f"--python_out={tmp}",
            f"--grpc_python_out={tmp}",
            f"--mypy_out={tmp}",
            f"--mypy_grpc_out={tmp}",
            *(str(p.relative_to(PROTO_ROOT)) for p in protos),
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
        target = out_root / PACKAGE
        target.mkdir(parents=True, exist_ok=True)
        for stale in target.glob("*_pb2*.py*"):
            stale.unlink()
        written = []
        for path in sorted((Path(tmp) / PACKAGE).iterdir()):
            shutil.copy(path, target / path.name)
            written.append(PACKAGE / path.name)
        for init in (out_root / "cancellation_hearts" / "__init__.py", target / "__init__.py"):
            init.write_text('"""Generated protocol code of Cancellation Hearts; do not edit."""\n')
        return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="root folder to write into")
    args = parser.parse_args()
    for path in generate(args.out):
        print(path)


if __name__ == "__main__":
    sys.exit(main())
