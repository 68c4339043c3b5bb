/* hold_pose.c's controller over the shared memory fast path (docs/protocol.md, "Shared memory"):
 * on the simulator's host, the states are read from and the commands written to a segment the
 * simulator passes with its welcome, with an eventfd wake-up each way; messages (welcome, error,
 * bye) come on the Unix channel, each a 4-byte little-endian length and then msgpack.
 *
 *   make -C examples/c
 *   examples/c/hold_pose_shm tcp://127.0.0.1:2809 robot hold 400 20
 *
 * Arguments and exit status as hold_pose. It needs Linux (memfd, eventfd) and a simulator without keys.
 */
#include <msgpack.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "wire.h"

#define STATES_WRITTEN 16 /* header offsets of the two counters */
#define COMMANDS_WRITTEN 24

struct segment {
    unsigned char *base;
    size_t size;
    int joints, state, command; /* n and the byte offsets of the two blocks */
    int bell_in, bell_out;      /* rung by the simulator after a state; by us after a command */
};

/* --- the Unix channel --- */

/* Read exactly `size` bytes; descriptors passed with them go to fds (up to 3, -1 where none). */
static int read_exactly(int sock, unsigned char *out, size_t size, int *fds) {
    size_t got = 0;
    while (got < size) {
        struct pollfd p = {sock, POLLIN, 0};
        if (poll(&p, 1, TIMEOUT_MS) <= 0) return -1;
        struct iovec iov = {out + got, size - got};
        char control[CMSG_SPACE(3 * sizeof(int))];
        struct msghdr msg = {0};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        ssize_t n = recvmsg(sock, &msg, 0);
        if (n <= 0) return -1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c && fds; c = CMSG_NXTHDR(&msg, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(3 * sizeof(int)))
                memcpy(fds, CMSG_DATA(c), 3 * sizeof(int));
        got += (size_t)n;
    }
    return 0;
}

/* One message: 0 and `result` unpacked (its bytes in *frame), or -1. */
static int read_message(int sock, msgpack_unpacked *result, char **frame, int *fds) {
    unsigned char head[4];
    if (read_exactly(sock, head, 4, fds) != 0) return -1;
    uint32_t size = (uint32_t)head[0] | (uint32_t)head[1] << 8 | (uint32_t)head[2] << 16 | (uint32_t)head[3] << 24;
    free(*frame);
    *frame = malloc(size ? size : 1);
    if (read_exactly(sock, (unsigned char *)*frame, size, fds) != 0) return -1;
    size_t offset = 0;
    msgpack_unpacked_destroy(result);
    msgpack_unpacked_init(result);
    return msgpack_unpack_next(result, *frame, size, &offset) == MSGPACK_UNPACK_SUCCESS ? 0 : -1;
}

static int send_framed(int sock, msgpack_sbuffer *buf) {
    unsigned char head[4] = {buf->size & 0xff, buf->size >> 8 & 0xff, buf->size >> 16 & 0xff, buf->size >> 24 & 0xff};
    int ok = write(sock, head, 4) == 4 && write(sock, buf->data, buf->size) == (ssize_t)buf->size;
    msgpack_sbuffer_clear(buf);
    return ok ? 0 : -1;
}

static int connect_unix(const char *endpoint) {
    const char *path = endpoint + strlen("unix://");
    struct sockaddr_un addr = {0};
    addr.sun_family = AF_UNIX;
    if (strncmp(endpoint, "unix://", 7) != 0 || strlen(path) >= sizeof addr.sun_path) return -1;
    strcpy(addr.sun_path, path);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    if (sock >= 0 && connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(sock);
        return -1;
    }
    return sock;
}

static void send_hello(int sock, msgpack_sbuffer *buf, const char *name, const char *robot) {
    msgpack_packer pk;
    msgpack_packer_init(&pk, buf, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 7);
    pack_key(&pk, "v"); msgpack_pack_int(&pk, PROTOCOL_VERSION);
    pack_string(&pk, "type", "hello");
    pack_string(&pk, "controller", name);
    pack_string(&pk, "robot", robot);
    pack_key(&pk, "period"); msgpack_pack_nil(&pk);
    pack_key(&pk, "pid"); msgpack_pack_int(&pk, (int)getpid());
    pack_key(&pk, "shared_memory"); msgpack_pack_true(&pk);
    send_framed(sock, buf);
}

/* --- the segment --- */

static int integer(const msgpack_object *map, const char *key) {
    const msgpack_object *o = field(map, key);
    return o && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? (int)o->via.u64 : -1;
}

static int map_segment(const msgpack_object *welcome, const int *fds, struct segment *seg) {
    const msgpack_object *layout = field(welcome, "shared_memory");
    if (!layout || fds[0] < 0 || integer(layout, "version") != 1) return -1;
    seg->size = (size_t)integer(layout, "size");
    seg->joints = integer(layout, "joints");
    seg->state = integer(layout, "state");
    seg->command = integer(layout, "command");
    seg->base = mmap(NULL, seg->size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    close(fds[0]);
    seg->bell_in = fds[1];
    seg->bell_out = fds[2];
    return seg->base == MAP_FAILED || seg->joints > MAX_JOINTS ? -1 : 0;
}

static uint64_t *counter(struct segment *seg, int offset) { return (uint64_t *)(seg->base + offset); }

/* Answer the state in the segment with PD torques; the first state sets the pose held. */
static void answer(struct segment *seg, double p_gain, double d_gain, double *q_ref, int *have_ref) {
    int n = seg->joints;
    const double *q = (const double *)(seg->base + seg->state + 16), *dq = q + n;
    int64_t tick;
    memcpy(&tick, seg->base + seg->state, 8);
    if (!*have_ref) {
        memcpy(q_ref, q, sizeof(double) * (size_t)n);
        *have_ref = 1;
    }
    unsigned char *cmd = seg->base + seg->command;
    double *tau = (double *)(cmd + 16);
    for (int i = 0; i < n; i++) tau[i] = p_gain * (q_ref[i] - q[i]) - d_gain * dq[i];
    uint64_t mask = 1; /* bit 0: torque */
    memcpy(cmd, &tick, 8);
    memcpy(cmd + 8, &mask, 8);
    __atomic_fetch_add(counter(seg, COMMANDS_WRITTEN), 1, __ATOMIC_RELEASE);
    uint64_t one = 1;
    if (write(seg->bell_out, &one, 8) != 8) perror("hold_pose_shm: doorbell");
}

/* A message on the channel: 0 to go on, else the exit status. */
static int on_message(const msgpack_object *msg, int answered) {
    const msgpack_object *type = field(msg, "type");
    const msgpack_object *text = field(msg, is_string(type, "bye") ? "reason" : "message");
    int length = text && text->type == MSGPACK_OBJECT_STR ? (int)text->via.str.size : 0;
    if (is_string(type, "bye")) {
        printf("hold_pose_shm: bye after %d ticks: %.*s\n", answered, length, text ? text->via.str.ptr : "");
        return 1000; /* status 0 */
    }
    if (is_string(type, "error")) {
        fprintf(stderr, "hold_pose_shm: the simulator says: %.*s\n", length, text ? text->via.str.ptr : "");
        const msgpack_object *fatal = field(msg, "fatal");
        return fatal && fatal->type == MSGPACK_OBJECT_BOOLEAN && fatal->via.boolean ? 2 : 0;
    }
    fprintf(stderr, "hold_pose_shm: a %.*s message this example does not handle\n",
            type && type->type == MSGPACK_OBJECT_STR ? (int)type->via.str.size : 0, type ? type->via.str.ptr : "");
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s NAMESERVER ROBOT NAME P_GAIN D_GAIN [SIMULATOR]\n", argv[0]);
        return 2;
    }
    const char *nameserver = argv[1], *robot = argv[2], *name = argv[3];
    double p_gain = atof(argv[4]), d_gain = atof(argv[5]);
    const char *simulator = argc > 6 ? argv[6] : "simserver";
    void *ctx = zmq_ctx_new();
    char endpoint[256];
    int found = resolve(ctx, nameserver, simulator, "controllers_unix", endpoint, sizeof endpoint);
    zmq_ctx_term(ctx);
    int sock = found == 0 ? connect_unix(endpoint) : -1;
    if (sock < 0) {
        fprintf(stderr, "hold_pose_shm: no Unix channel of simulator %s (via the nameserver at %s)\n", simulator,
                nameserver);
        return 3;
    }
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    send_hello(sock, &buf, name, robot);
    msgpack_unpacked msg;
    msgpack_unpacked_init(&msg);
    char *frame = NULL;
    int fds[3] = {-1, -1, -1}, status = 3;
    struct segment seg;
    if (read_message(sock, &msg, &frame, fds) != 0 || !is_string(field(&msg.data, "type"), "welcome") ||
        map_segment(&msg.data, fds, &seg) != 0) {
        fprintf(stderr, "hold_pose_shm: no welcome with a shared memory segment\n");
        return 2;
    }
    printf("hold_pose_shm: attached to %s at %s via shared memory\n", robot, endpoint);
    double q_ref[MAX_JOINTS];
    int have_ref = 0, answered = 0;
    uint64_t states_read = 0;
    struct pollfd waits[2] = {{seg.bell_in, POLLIN, 0}, {sock, POLLIN, 0}};
    while (poll(waits, 2, TIMEOUT_MS) > 0) {
        if (waits[1].revents) {
            int verdict = read_message(sock, &msg, &frame, NULL) == 0 ? on_message(&msg.data, answered) : 1;
            if (verdict) {
                status = verdict == 1000 ? 0 : verdict;
                break;
            }
        }
        if (waits[0].revents) {
            uint64_t rings;
            if (read(seg.bell_in, &rings, 8) != 8) break;
        }
        uint64_t written = __atomic_load_n(counter(&seg, STATES_WRITTEN), __ATOMIC_ACQUIRE);
        if (written != states_read) {
            states_read = written;
            answer(&seg, p_gain, d_gain, q_ref, &have_ref);
            answered++;
        }
    }
    if (status == 3) fprintf(stderr, "hold_pose_shm: the simulator went quiet for %d ms\n", TIMEOUT_MS);
    free(frame);
    msgpack_unpacked_destroy(&msg);
    msgpack_sbuffer_destroy(&buf);
    munmap(seg.base, seg.size);
    close(sock);
    return status;
}
