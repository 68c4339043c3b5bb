"""The nameserver's operations, each declared once (hrpsim/operations.py): what nameserver/name_service.py
serves, what ``hrpsim ns`` offers and what docs/protocol.md tabulates."""

from __future__ import annotations

from hrpsim.operations import PING, QUIT, Arg, Op

_NAME = Arg("name", "the registered name", cli="")
_OWNER = Arg("owner", "the registering process's secret")

NAMESERVER: tuple[Op, ...] = (
    Op(
        "register",
        "register a name; AccessDenied if another owner holds it",
        args=(
            _NAME,
            Arg("kind"),
            Arg("endpoint"),
            _OWNER,
            Arg("metadata", default=None),
        ),
        result="`{ttl}`",
        role="controller",
        method="op_register",
    ),
    Op(
        "heartbeat",
        "keep a registration alive; NotFound if it expired (register again)",
        args=(_NAME, _OWNER),
        result="`{ttl}`",
        role="controller",
        method="op_heartbeat",
    ),
    Op(
        "unregister",
        "remove a registration",
        args=(_NAME, _OWNER),
        result="true",
        role="controller",
        method="op_unregister",
    ),
    Op(
        "resolve",
        "the entry registered under a name; NotFound naming what is registered",
        args=(_NAME,),
        result="the entry",
        role="observer",
        cli="resolve",
        method="registry.resolve",
        cli_doc="what is registered under a name",
    ),
    Op(
        "list",
        "every entry, sorted by name",
        args=(Arg("kind", "nil for all", default=None, cli="--kind", metavar="KIND"),),
        result="a list of entries",
        role="observer",
        cli="list",
        method="op_list",
        cli_doc="list registered services",
    ),
    PING,
    QUIT,
)
