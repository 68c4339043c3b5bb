"""The codec: exact round trips, and clear refusals of what is not a well-formed message."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hrpsim.codec import CODEC, PROTOCOL_VERSION
from hrpsim.errors import ProtocolError

DTYPES = [np.float64, np.float32, np.int32, np.int64, np.uint8, np.bool_, np.complex128]


def assert_same(a, b) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    else:
        assert a == b and type(a) is type(b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (1, 0, 4), (2, 2, 2, 2)])
def test_arrays_round_trip_with_dtype_and_shape(dtype, shape) -> None:
    arr = (np.arange(int(np.prod(shape))) % 3).astype(dtype).reshape(shape)
    assert_same(arr, CODEC.decode(CODEC.encode(arr)))


def test_big_endian_and_strided_arrays_arrive_as_native_contiguous_copies() -> None:
    big = np.arange(6, dtype=">f8").reshape(2, 3)
    out = CODEC.decode(CODEC.encode(big))
    assert out.dtype == np.float64 and out.dtype.isnative
    np.testing.assert_array_equal(out, big)
    strided = np.arange(20.0).reshape(4, 5)[:, ::2]
    np.testing.assert_array_equal(CODEC.decode(CODEC.encode(strided)), strided)


def test_decoded_arrays_are_writable() -> None:
    out = CODEC.decode(CODEC.encode(np.zeros(3)))
    out[0] = 1.0
    assert out[0] == 1.0


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.binary(max_size=20)
    | hnp.arrays(
        st.sampled_from([np.float64, np.int32, np.uint8]), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)
    ),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(values)
def test_decode_is_the_exact_inverse_of_encode(value) -> None:
    assert_same(value, CODEC.decode(CODEC.encode(value)))


def test_humanoid_state_message_round_trips() -> None:
    state = {
        "time": 1.234,
        "tick": 1234,
        "q": np.random.default_rng(1).normal(size=30),
        "sensors": {f"f{i}": np.ones(6) * i for i in range(4)} | {"gyro": np.zeros(3)},
    }
    assert_same(state, CODEC.decode(CODEC.encode(state)))


def test_envelope_carries_the_version_and_parses_back() -> None:
    frame = CODEC.request(7, "resolve", {"name": "sim"})
    assert msgpack.unpackb(frame)["v"] == PROTOCOL_VERSION
    req = CODEC.parse_request(frame)
    assert (req.id, req.op, req.args) == (7, "resolve", {"name": "sim"})
    rep = CODEC.parse_reply(CODEC.error(7, "NotFound", "no such name"))
    assert (rep.id, rep.ok, rep.error_type, rep.error_message) == (7, False, "NotFound", "no such name")


def test_a_peer_of_another_version_is_refused_by_name() -> None:
    frame = msgpack.packb({"v": PROTOCOL_VERSION + 1, "id": 1, "op": "list", "args": {}})
    with pytest.raises(ProtocolError, match=f"version {PROTOCOL_VERSION + 1}"):
        CODEC.parse_request(frame)


@pytest.mark.parametrize(
    "frame, field",
    [
        (msgpack.packb([1, 2, 3]), "map"),
        (msgpack.packb({"v": PROTOCOL_VERSION, "id": "x", "op": "a"}), "'id'"),
        (msgpack.packb({"v": PROTOCOL_VERSION, "id": 1, "op": 5}), "'op'"),
        (msgpack.packb({"v": PROTOCOL_VERSION, "id": 1, "op": "a", "args": [1]}), "'args'"),
        (b"\xc1\x00garbage", "undecodable"),
        (
            msgpack.packb({"v": PROTOCOL_VERSION, "id": 1, "op": "a", "args": {"x": msgpack.ExtType(9, b"")}}),
            "extension type 9",
        ),
    ],
)
def test_malformed_requests_name_what_is_wrong(frame: bytes, field: str) -> None:
    with pytest.raises(ProtocolError, match=field):
        CODEC.parse_request(frame)


def test_truncated_or_lying_array_headers_are_protocol_errors() -> None:
    ext = CODEC.encode(np.arange(4.0))
    for cut in range(1, len(ext)):
        try:
            CODEC.decode(ext[:cut])
        except ProtocolError:
            continue
    lying = msgpack.packb(msgpack.ExtType(1, b"\x03<f8\x01\xff\xff\xff\x7f" + b"\x00" * 8))
    with pytest.raises(ProtocolError, match="needs"):
        CODEC.decode(lying)
    objects = msgpack.packb(msgpack.ExtType(1, b"\x02|O\x01\x01\x00\x00\x00" + b"\x00" * 8))
    with pytest.raises(ProtocolError, match="refused"):
        CODEC.decode(objects)


def test_values_that_cannot_travel_are_refused_on_the_sending_side() -> None:
    with pytest.raises(ProtocolError, match="dtype"):
        CODEC.encode(np.array(["a", "b"]))
    with pytest.raises(ProtocolError, match="object"):
        CODEC.encode(object())


def test_encoding_from_many_threads_at_once_never_mixes_frames():
    """A process encodes from its main loop and from its heartbeat thread at the same time."""
    import threading

    import numpy as np

    from hrpsim.codec import CODEC

    values = [{"tick": k, "q": np.full(40, float(k)), "name": "x" * k} for k in range(8)]
    failures: list[str] = []

    def work(value: dict) -> None:
        for _ in range(3000):
            try:
                back = CODEC.decode(CODEC.encode(value))
            except Exception as exc:  # a corrupted frame fails to decode
                failures.append(f"thread {value['tick']}: {type(exc).__name__}: {exc}")
                return
            if back["tick"] != value["tick"] or not np.array_equal(back["q"], value["q"]):
                failures.append(f"thread {value['tick']} read {back['tick']}")
                return

    threads = [threading.Thread(target=work, args=(v,)) for v in values]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert failures == []
