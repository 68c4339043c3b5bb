"""VRML97 text -> :class:`ParsedFile`, with lark's LALR parser and contextual lexer.

The tree is built by callbacks during parsing (no intermediate parse tree), and a bracketed list
of plain numbers is one token converted by numpy, which is where the bulk of a mesh file goes.
Syntax errors become :class:`ModelError` naming file:line:column and what was expected.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from hrpsim.errors import ModelError
from hrpsim.modelloader.vrml.nodes import MF, ExternProto, Interface, IsRef, Node, ParsedFile, Proto, Use, Where
from hrpsim.modelloader.vrml.unclosed import describe_end

GRAMMAR = Path(__file__).with_name("vrml97.lark")

# Readable names for the terminals an error message may list as expected.
_TERMINAL_NAMES = {
    "ID": "a name",
    "NUMBER": "a number",
    "NUMBER_ARRAY": "'['",
    "STRING": "a string",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LSQB": "'['",
    "RSQB": "']'",
    "DOT": "'.'",
}


def _where(builder: _TreeBuilder, token: Token) -> Where:
    return Where(builder.file, token.line or 0, token.column or 0)


def _scalar(token: Any) -> Any:
    if not isinstance(token, Token):
        return token  # already converted (TRUE/FALSE/NULL)
    if token.type == "STRING":
        return _unescape(token.value)
    text = token.value
    if text[:3] in ("0x", "0X") or text[1:3] in ("0x", "0X"):
        return float(int(text, 16))
    return float(text)


def _unescape(quoted: str) -> str:
    body = quoted[1:-1]
    if "\\" not in body:
        return body
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            i += 1
            ch = body[i]
        out.append(ch)
        i += 1
    return "".join(out)


def _numbers(text: str) -> np.ndarray:
    """The numbers of a bracketed list the lexer matched (so every item is a number), read by numpy
    straight from the text: no Python string per number (a mesh of millions of numbers would
    take ten times the file's size)."""
    inner = text[1:-1]
    if "#" in inner:
        inner = "\n".join(line.split("#", 1)[0] for line in inner.splitlines())
    if "," in inner:
        inner = inner.replace(",", " ")
    if not inner.strip():
        return np.empty(0)  # numpy reads an empty text as [-1.0]
    return np.fromstring(inner, dtype=np.float64, sep=" ")


class _TreeBuilder(Transformer):
    """Callbacks named after the grammar's rules; each returns the node-tree piece for its rule."""

    file = ""

    def start(self, items: list[Any]) -> tuple[list[Any], list[Any]]:
        statements = [s for s in items if isinstance(s, Node | Use)]
        protos = [s for s in items if isinstance(s, Proto | ExternProto)]
        return statements, protos

    def node(self, items: list[Any]) -> Node:
        type_token, elements = items[0], items[1:]
        node = Node(type_token.value, {}, _where(self, type_token))
        for element in elements:
            if isinstance(element, tuple) and element[0] == "field":
                _, name, value, where = element
                node.fields[name] = value
                node.field_where[name] = where
            elif isinstance(element, Interface):  # a Script's own interface
                node.fields[element.name] = element.default
        return node

    def def_node(self, items: list[Any]) -> Node:
        name, node = items
        node.def_name = name.value
        return node

    def use_node(self, items: list[Any]) -> Use:
        return Use(items[0].value, _where(self, items[0]))

    def field(self, items: list[Any]) -> tuple[str, str, Any, Where]:
        name, value = items
        return ("field", name.value, value, _where(self, name))

    def is_field(self, items: list[Any]) -> tuple[str, str, Any, Where]:
        name, target = items
        return ("field", name.value, IsRef(target.value, _where(self, target)), _where(self, name))

    def route(self, items: list[Any]) -> tuple[str]:
        return ("route",)

    def field_kind(self, items: list[Any]) -> str:
        return items[0].value

    def event_kind(self, items: list[Any]) -> str:
        return items[0].value

    def interface_decl(self, items: list[Any]) -> Interface:
        kind, type_, name = items[0], items[1].value, items[2].value
        default = items[3] if len(items) > 3 else None
        return Interface(kind, type_, name, default)

    def interface_is(self, items: list[Any]) -> Interface:
        kind, type_, name, target = items
        return Interface(kind, type_.value, name.value, IsRef(target.value, _where(self, target)))

    def extern_decl(self, items: list[Any]) -> Interface:
        return Interface(items[0], items[1].value, items[2].value)

    def proto(self, items: list[Any]) -> Proto:
        name = items[0]
        interface = {i.name: i for i in items[1:] if isinstance(i, Interface)}
        body = [s for s in items[1:] if isinstance(s, Node | Use | Proto | ExternProto)]
        return Proto(name.value, interface, body, _where(self, name))

    def externproto(self, items: list[Any]) -> ExternProto:
        name, decls, urls = items[0], items[1:-1], items[-1]
        url_list = [u for u in (urls if isinstance(urls, list) else [urls]) if isinstance(u, str)]
        return ExternProto(name.value, {d.name: d for d in decls}, url_list, _where(self, name))

    def number_array(self, items: list[Any]) -> np.ndarray:
        return _numbers(items[0].value)

    def mf(self, items: list[Any]) -> MF:
        return MF(_scalar(i) if isinstance(i, Token) else i for i in items)

    def scalars(self, items: list[Any]) -> list[Any]:
        return [_scalar(i) for i in items]

    def true(self, _items: list[Any]) -> bool:
        return True

    def false(self, _items: list[Any]) -> bool:
        return False

    def null(self, _items: list[Any]) -> None:
        return None


_builder = _TreeBuilder()
_lock = threading.Lock()
_parser: Lark | None = None


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        _parser = Lark(
            GRAMMAR.read_text(),
            parser="lalr",
            lexer="contextual",
            transformer=_builder,
            maybe_placeholders=False,
            cache=True,
        )
    return _parser


def parse_text(text: str, path: str) -> ParsedFile:
    """Parse one file's text; ``path`` is what locations (and errors) name."""
    with _lock:
        parser = _get_parser()
        _builder.file = path
        try:
            statements, protos = parser.parse(text)
        except UnexpectedInput as exc:
            raise ModelError(_syntax_message(exc, path, parser, text)) from None
        except LarkError as exc:
            raise ModelError(f"{path}: cannot parse: {exc}") from None
        except (ValueError, OverflowError) as exc:  # a number token Python cannot convert
            raise ModelError(f"{path}: bad number: {exc}") from None
    return ParsedFile(path, statements, protos)


def decode(data: bytes) -> str:
    """VRML97 says UTF-8; real files carry Shift-JIS or Latin-1 comments, so fall back."""
    for encoding in ("utf-8", "cp932"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def _syntax_message(exc: UnexpectedInput, path: str, parser: Lark, text: str) -> str:
    where = f"{path}:{getattr(exc, 'line', '?')}:{getattr(exc, 'column', '?')}"
    if isinstance(exc, UnexpectedEOF):
        return f"{describe_end(text, path)}; expected {_expected(exc.expected, parser)}"
    if isinstance(exc, UnexpectedToken):
        if exc.token.type == "$END":
            return f"{describe_end(text, path)}; expected {_expected(exc.expected, parser)}"
        # The token's kind, not its text: an error must not carry a file's contents to a peer.
        found = _TERMINAL_NAMES.get(exc.token.type, exc.token.type.lower())
        return f"{where}: syntax error: unexpected {found}; expected {_expected(exc.expected, parser)}"
    if isinstance(exc, UnexpectedCharacters):
        char = getattr(exc, "char", "?")
        shown = repr(char) if char.isascii() and not char.isalnum() else f"U+{ord(char):04X}" if len(char) == 1 else "?"
        return f"{where}: syntax error: unexpected character {shown}; expected {_expected(exc.allowed, parser)}"
    return f"{where}: syntax error"


def _expected(names: Any, parser: Lark) -> str:
    readable = set()
    for name in names or ():
        if name in _TERMINAL_NAMES:
            readable.add(_TERMINAL_NAMES[name])
            continue
        try:
            pattern = parser.get_terminal(name).pattern
        except (KeyError, AttributeError):
            readable.add(name)
            continue
        readable.add(repr(pattern.value) if pattern.type == "str" else name.lower())
    return "one of " + ", ".join(sorted(readable)) if len(readable) > 1 else "".join(readable) or "nothing more"
