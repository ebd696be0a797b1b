"""A local S3-compatible server for the object-storage tests: moto's own server (``moto_server``,
in its own process on 127.0.0.1), with authentication on, so a wrong key is refused as a real
bucket refuses it.

moto checks signatures once ``INITIAL_NO_AUTH_ACTION_COUNT`` unauthenticated requests are spent:
the first three create an IAM user, its policy and its access key; every request after them must
be signed with that key."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from browser_util import free_port

MOTO = str(Path(sys.executable).with_name("moto_server"))
BUCKET = "evalcore-test"


@contextlib.contextmanager
def s3_server(log: Path) -> Iterator[dict[str, str]]:
    """Start moto's server; yield the environment (AWS_* variables) a client needs, with the
    bucket :data:`BUCKET` created."""
    import boto3

    port = free_port()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [MOTO, "-H", "127.0.0.1", "-p", str(port)], stdout=fh, stderr=subprocess.STDOUT, env=env
        )
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.time()
        while True:
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
                break
            except OSError:
                if time.time() - t0 > 60 or proc.poll() is not None:
                    raise RuntimeError(f"moto_server did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.2)
        boot = {"aws_access_key_id": "bootstrap", "aws_secret_access_key": "bootstrap", "region_name": "us-east-1"}
        iam = boto3.client("iam", endpoint_url=url, **boot)
        iam.create_user(UserName="evalcore")
        iam.put_user_policy(
            UserName="evalcore",
            PolicyName="all",
            PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
            ),
        )
        key = iam.create_access_key(UserName="evalcore")["AccessKey"]
        creds = {
            "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
            "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": url,
        }
        boto3.client(
            "s3",
            endpoint_url=url,
            aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"],
            region_name="us-east-1",
        ).create_bucket(Bucket=BUCKET)
        yield creds
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def s3_client(creds: dict[str, str]):
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=creds["AWS_ENDPOINT_URL"],
        aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"],
        region_name=creds["AWS_DEFAULT_REGION"],
    )


def upload(creds: dict[str, str], local: Path, prefix: str) -> int:
    """Every file under ``local`` to ``s3://BUCKET/prefix/...``; how many."""
    s3 = s3_client(creds)
    n = 0
    for p in sorted(local.rglob("*")):
        if p.is_file():
            s3.upload_file(str(p), BUCKET, f"{prefix}/{p.relative_to(local).as_posix()}")
            n += 1
    return n


@contextlib.contextmanager
def counted_requests() -> Iterator[dict[str, int]]:
    """Count, in this process, the requests s3fs sends and the bytes of the objects' bodies it
    receives: ``get`` (GetObject, whole or ranged), ``bytes`` (their ContentLength), ``list`` and
    ``head``. Counted at s3fs's one call into botocore (``S3FileSystem._call_s3``), so every read
    of every fsspec file, cache or DuckDB read is seen."""
    import s3fs

    counts = {"get": 0, "bytes": 0, "list": 0, "head": 0}
    original = s3fs.S3FileSystem._call_s3

    async def counting(self, method, *args, **kw):
        out = await original(self, method, *args, **kw)
        name = getattr(method, "__name__", str(method))
        if name == "get_object":
            counts["get"] += 1
            counts["bytes"] += int(out.get("ContentLength") or 0)
        elif name.startswith("list_object"):
            counts["list"] += 1
        elif name == "head_object":
            counts["head"] += 1
        return out

    s3fs.S3FileSystem._call_s3 = counting
    try:
        yield counts
    finally:
        s3fs.S3FileSystem._call_s3 = original
