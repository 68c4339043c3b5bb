/* A controller in C: holds every joint of a robot at the angle it starts at, with a PD law.
 *
 * It speaks hrpsim's wire protocol (docs/protocol.md) with libzmq and msgpack-c only:
 *   1. ask the nameserver (op "resolve") for the simulator and read its controller endpoint;
 *   2. say "hello" to the simulator's controller hub and read the "welcome";
 *   3. answer every "state" with a "command" of joint torques, until "bye".
 *
 *   make -C examples/c
 *   examples/c/hold_pose tcp://127.0.0.1:2809 robot hold 400 20
 *
 * Arguments: nameserver address, robot, controller name, P gain, D gain [, simulator name].
 * Exit status: 0 after the simulator's bye, 2 when it refuses the controller, 3 when it is not there.
 */
#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "wire.h"

static void send_hello(void *hub, msgpack_sbuffer *buf, const char *name, const char *robot) {
    msgpack_packer pk;
    msgpack_packer_init(&pk, buf, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 6);
    pack_key(&pk, "v"); msgpack_pack_int(&pk, PROTOCOL_VERSION);
    pack_string(&pk, "type", "hello");
    pack_string(&pk, "controller", name);
    pack_string(&pk, "robot", robot);
    pack_key(&pk, "period"); msgpack_pack_nil(&pk); /* the project's period, else one time step */
    pack_key(&pk, "pid"); msgpack_pack_int(&pk, (int)getpid());
    send_buffer(hub, buf);
}

/* A command of joint torques (a plain msgpack array of doubles: commands may skip the extension); the
 * joints' drive modes stay as the project sets them. */
static void send_torques(void *hub, msgpack_sbuffer *buf, uint64_t tick, const double *tau, int n) {
    msgpack_packer pk;
    msgpack_packer_init(&pk, buf, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4);
    pack_key(&pk, "v"); msgpack_pack_int(&pk, PROTOCOL_VERSION);
    pack_string(&pk, "type", "command");
    pack_key(&pk, "tick"); msgpack_pack_uint64(&pk, tick);
    pack_key(&pk, "torque"); msgpack_pack_array(&pk, (size_t)n);
    for (int i = 0; i < n; i++) msgpack_pack_double(&pk, tau[i]);
    send_buffer(hub, buf);
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
    if (resolve(ctx, nameserver, simulator, "controllers", endpoint, sizeof endpoint) != 0) {
        fprintf(stderr, "hold_pose: no simulator %s registered with the nameserver at %s\n", simulator, nameserver);
        zmq_ctx_term(ctx);
        return 3;
    }
    void *hub = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 200;
    zmq_setsockopt(hub, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(hub, endpoint);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    send_hello(hub, &buf, name, robot);

    msgpack_unpacked msg;
    msgpack_unpacked_init(&msg);
    char *frame = NULL;
    double q[MAX_JOINTS], dq[MAX_JOINTS], q_ref[MAX_JOINTS], tau[MAX_JOINTS];
    int n = -1, status = 3, answered = 0;
    while (receive(hub, &msg, &frame, TIMEOUT_MS) == 0) {
        const msgpack_object *type = field(&msg.data, "type");
        if (is_string(type, "welcome")) {
            printf("hold_pose: attached to %s at %s\n", robot, endpoint);
        } else if (is_string(type, "state")) {
            const msgpack_object *tick = field(&msg.data, "tick");
            int nq = read_doubles(field(&msg.data, "q"), q, MAX_JOINTS);
            int ndq = read_doubles(field(&msg.data, "dq"), dq, MAX_JOINTS);
            if (!tick || tick->type != MSGPACK_OBJECT_POSITIVE_INTEGER || nq < 0 || ndq != nq) {
                fprintf(stderr, "hold_pose: a state without tick, q or dq\n");
                status = 1;
                break;
            }
            if (n < 0) {
                n = nq;
                memcpy(q_ref, q, sizeof(double) * (size_t)n);
            }
            for (int i = 0; i < n; i++) tau[i] = p_gain * (q_ref[i] - q[i]) - d_gain * dq[i];
            send_torques(hub, &buf, tick->via.u64, tau, n);
            answered++;
        } else if (is_string(type, "bye")) {
            const msgpack_object *reason = field(&msg.data, "reason");
            printf("hold_pose: bye after %d ticks: %.*s\n", answered, reason && reason->type == MSGPACK_OBJECT_STR ?
                   (int)reason->via.str.size : 0, reason ? reason->via.str.ptr : "");
            status = 0;
            break;
        } else if (is_string(type, "error")) {
            const msgpack_object *text = field(&msg.data, "message");
            const msgpack_object *fatal = field(&msg.data, "fatal");
            fprintf(stderr, "hold_pose: the simulator says: %.*s\n", text && text->type == MSGPACK_OBJECT_STR ?
                    (int)text->via.str.size : 0, text ? text->via.str.ptr : "");
            if (fatal && fatal->type == MSGPACK_OBJECT_BOOLEAN && fatal->via.boolean) {
                status = 2;
                break;
            }
        }
    }
    if (status == 3) fprintf(stderr, "hold_pose: the simulator went quiet for %d ms\n", TIMEOUT_MS);
    free(frame);
    msgpack_unpacked_destroy(&msg);
    msgpack_sbuffer_destroy(&buf);
    zmq_close(hub);
    zmq_ctx_term(ctx);
    return status;
}
