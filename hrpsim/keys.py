"""A deployment's CurveZMQ keys: one folder, made by ``hrpsim keys new DIR``.

The folder holds

- ``server.key`` / ``server.key_secret``: the pair every service binds with (and uses when it
  calls another service). Its public half goes to every host; its secret half only to the hosts
  that run services.
- ``NAME.key`` / ``NAME.key_secret``: one pair per host or user (``hrpsim keys new DIR --name
  NAME --role ROLE``). A host gets its own secret and the server's public key, nothing more.
- ``allowed``: the allow-list, one line per public key: ``ROLE NAME KEY [ROBOT,...]``. A service
  accepts a peer only if its key is on this list; deleting a line revokes the key (services
  read the list again when it changes). ROBOTs limit a ``controller`` key to those robots.

Roles, each granting what the ones before it grant: ``observer`` (state stream, status, queries),
``controller`` (attach to robots, register its own name), ``admin`` (run control: start, pause,
step, reset, init, set_link_data, quit), ``service`` (register a service's name).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import zmq.auth

from hrpsim.errors import ConfigError

ROLES = ("observer", "controller", "admin", "service")
SERVER = "server"
ALLOWED = "allowed"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def rank(role: str) -> int:
    return ROLES.index(role)


@dataclass(frozen=True)
class Grant:
    """What one allowed key may do."""

    name: str
    role: str
    robots: tuple[str, ...] = ()  # a controller key limited to these robots (empty: any)

    @property
    def user_id(self) -> str:
        """How a service knows the peer: the ZAP handler's User-Id, ``role:name[:robot,...]``."""
        return ":".join([self.role, self.name, *([",".join(self.robots)] if self.robots else [])])


@dataclass(frozen=True)
class Identity:
    """This process's pair and the public key of the deployment's services (z85 bytes)."""

    public: bytes
    secret: bytes
    server_public: bytes
    name: str


def read_allowed(folder: Path) -> dict[bytes, Grant]:
    """The allow-list: public key (z85) -> grant. ConfigError naming file and line for a bad line."""
    path = folder / ALLOWED
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot read the allow-list: {exc.strerror}; make a key folder with 'hrpsim keys new {folder}'"
        ) from None
    grants: dict[bytes, Grant] = {}
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):  # a comment is a whole line: z85 keys hold '#'
            continue
        if len(fields) not in (3, 4) or fields[0] not in ROLES or len(fields[2]) != 40:
            raise ConfigError(
                f"{path}:{number}: expected 'ROLE NAME KEY [ROBOT,...]' with ROLE one of "
                f"{', '.join(ROLES)} and a 40-character z85 public key"
            )
        robots = tuple(r for r in fields[3].split(",") if r) if len(fields) == 4 else ()
        grants[fields[2].encode("ascii")] = Grant(fields[1], fields[0], robots)
    return grants


def load_identity(folder: Path, name: str | None = None) -> Identity:
    """The pair called ``name`` in ``folder`` (default: ``server`` when this host has its secret,
    else the one secret the folder holds), with the server's public key."""
    name = name or _default_name(folder)
    try:
        public, secret = zmq.auth.load_certificate(folder / f"{name}.key_secret")
        server_public, _ = zmq.auth.load_certificate(folder / f"{SERVER}.key")
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{folder}: cannot load the key pair {name!r} and the server's public key ({exc}); "
            f"'hrpsim keys new {folder} --name {name}' makes a pair"
        ) from None
    if secret is None:
        raise ConfigError(f"{folder}/{name}.key_secret holds no secret key")
    return Identity(public, secret, server_public, name)


def _default_name(folder: Path) -> str:
    if (folder / f"{SERVER}.key_secret").is_file():
        return SERVER
    secrets = sorted(p.name.removesuffix(".key_secret") for p in folder.glob("*.key_secret"))
    if len(secrets) != 1:
        raise ConfigError(
            f"{folder}: {len(secrets)} secret keys here ({', '.join(secrets) or 'none'}); "
            "name the one to use with --key NAME or $HRPSIM_KEY"
        )
    return secrets[0]


def new_pair(folder: Path, name: str, role: str, robots: tuple[str, ...] = ()) -> Path:
    """Make ``name``'s pair in ``folder`` and put its public key on the allow-list."""
    if not _NAME.match(name):
        raise ConfigError(f"key name {name!r}: use letters, digits, '.', '_' and '-' (up to 64)")
    if role not in ROLES:
        raise ConfigError(f"role {role!r}: one of {', '.join(ROLES)}")
    if (folder / f"{name}.key").exists():
        raise ConfigError(f"{folder}/{name}.key exists already; choose another name or delete that pair")
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    public_file, secret_file = zmq.auth.create_certificates(folder, name)
    os.chmod(secret_file, 0o600)
    public, _ = zmq.auth.load_certificate(public_file)
    with open(folder / ALLOWED, "a", encoding="utf-8") as out:
        out.write(" ".join([role, name, public.decode("ascii"), *([",".join(robots)] if robots else [])]) + "\n")
    return Path(secret_file)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim keys", description="Make CurveZMQ keys for a deployment.")
    sub = parser.add_subparsers(dest="command", required=True)
    new = sub.add_parser(
        "new", help="make a key folder (the server's pair and an admin pair), or add a pair to one with --name"
    )
    new.add_argument("folder", type=Path)
    new.add_argument("--name", help="the host or user the new pair is for (default: admin, for a new folder)")
    new.add_argument("--role", choices=ROLES, default=None, help="what the key may do (default: admin)")
    new.add_argument("--robots", default="", help="comma-separated robots a controller key may attach to")
    args = parser.parse_args(argv)
    robots = tuple(r for r in args.robots.split(",") if r)
    try:
        made = []
        if not (args.folder / f"{SERVER}.key").exists():
            made.append(new_pair(args.folder, SERVER, "service"))
        if args.name or made:
            made.append(new_pair(args.folder, args.name or "admin", args.role or "admin", robots))
    except ConfigError as exc:
        print(f"hrpsim keys: {exc}", file=sys.stderr)
        return 1
    for path in made:
        print(f"made {path} (and its .key); allowed in {args.folder / ALLOWED}")
    return 0
