/* What the C controllers of examples/c share: msgpack packing and reading of hrpsim's messages
 * (docs/protocol.md) and the nameserver lookup. Included by hold_pose.c and hold_pose_shm.c. */
#ifndef HRPSIM_EXAMPLE_WIRE_H
#define HRPSIM_EXAMPLE_WIRE_H

#include <msgpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define PROTOCOL_VERSION 1
#define NDARRAY_EXT 1
#define TIMEOUT_MS 15000
#define MAX_JOINTS 256

/* --- packing --- */

static inline void pack_key(msgpack_packer *pk, const char *key) {
    msgpack_pack_str(pk, strlen(key));
    msgpack_pack_str_body(pk, key, strlen(key));
}

static inline void pack_string(msgpack_packer *pk, const char *key, const char *value) {
    pack_key(pk, key);
    msgpack_pack_str(pk, strlen(value));
    msgpack_pack_str_body(pk, value, strlen(value));
}

static inline int send_buffer(void *socket, msgpack_sbuffer *buf) {
    int rc = zmq_send(socket, buf->data, buf->size, 0);
    msgpack_sbuffer_clear(buf);
    return rc < 0 ? -1 : 0;
}

/* --- reading --- */

static inline const msgpack_object *field(const msgpack_object *map, const char *key) {
    if (map->type != MSGPACK_OBJECT_MAP) return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen(key) &&
            memcmp(k->via.str.ptr, key, k->via.str.size) == 0)
            return &map->via.map.ptr[i].val;
    }
    return NULL;
}

static inline int is_string(const msgpack_object *o, const char *text) {
    return o && o->type == MSGPACK_OBJECT_STR && o->via.str.size == strlen(text) &&
           memcmp(o->via.str.ptr, text, o->via.str.size) == 0;
}

/* An ndarray extension of little-endian doubles, one dimension: copy its values; their count or -1.
 * Payload: u8 L, dtype (L bytes), u8 ndim, u32 shape[ndim], data (the header of a vector is 9 bytes). */
static inline int read_doubles(const msgpack_object *o, double *out, int capacity) {
    if (!o || o->type != MSGPACK_OBJECT_EXT || o->via.ext.type != NDARRAY_EXT) return -1;
    const unsigned char *p = (const unsigned char *)o->via.ext.ptr;
    uint32_t size = o->via.ext.size;
    if (size < 1 || p[0] != 3 || size < 1u + 3u + 1u || memcmp(p + 1, "<f8", 3) != 0 || p[4] != 1) return -1;
    if (size < 9) return -1;
    uint32_t n = (uint32_t)p[5] | (uint32_t)p[6] << 8 | (uint32_t)p[7] << 16 | (uint32_t)p[8] << 24;
    if (n > (uint32_t)capacity || size != 9 + 8 * n) return -1;
    memcpy(out, p + 9, 8 * n); /* x86 and ARM are little-endian, as the wire is */
    return (int)n;
}

/* Receive one message into `result` (unpacked): 0, or -1 on timeout or a malformed frame. */
static inline int receive(void *socket, msgpack_unpacked *result, char **frame, int timeout_ms) {
    zmq_pollitem_t item = {socket, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, timeout_ms) <= 0) return -1;
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    int size = zmq_msg_recv(&msg, socket, 0);
    if (size < 0) return -1;
    free(*frame);
    *frame = malloc((size_t)size);
    memcpy(*frame, zmq_msg_data(&msg), (size_t)size);
    zmq_msg_close(&msg);
    size_t offset = 0;
    msgpack_unpacked_destroy(result);
    msgpack_unpacked_init(result);
    return msgpack_unpack_next(result, *frame, (size_t)size, &offset) == MSGPACK_UNPACK_SUCCESS ? 0 : -1;
}

/* --- the protocol --- */

/* The simulator's metadata[key] (an endpoint) from the nameserver: 0, or -1 when it is not there. */
static inline int resolve(void *ctx, const char *nameserver, const char *simulator, const char *key, char *endpoint,
                   size_t cap) {
    void *ns = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0, ok = -1;
    zmq_setsockopt(ns, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(ns, nameserver);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buf, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4);
    pack_key(&pk, "v"); msgpack_pack_int(&pk, PROTOCOL_VERSION);
    pack_key(&pk, "id"); msgpack_pack_int(&pk, 1);
    pack_string(&pk, "op", "resolve");
    pack_key(&pk, "args"); msgpack_pack_map(&pk, 1); pack_string(&pk, "name", simulator);
    send_buffer(ns, &buf);
    msgpack_unpacked reply;
    msgpack_unpacked_init(&reply);
    char *frame = NULL;
    if (receive(ns, &reply, &frame, TIMEOUT_MS) == 0) {
        const msgpack_object *okf = field(&reply.data, "ok");
        const msgpack_object *result = field(&reply.data, "result");
        const msgpack_object *meta = result ? field(result, "metadata") : NULL;
        const msgpack_object *hub = meta ? field(meta, key) : NULL;
        if (okf && okf->type == MSGPACK_OBJECT_BOOLEAN && okf->via.boolean && hub &&
            hub->type == MSGPACK_OBJECT_STR && hub->via.str.size < cap) {
            memcpy(endpoint, hub->via.str.ptr, hub->via.str.size);
            endpoint[hub->via.str.size] = '\0';
            ok = 0;
        }
    }
    free(frame);
    msgpack_unpacked_destroy(&reply);
    msgpack_sbuffer_destroy(&buf);
    zmq_close(ns);
    return ok;
}

#endif
