/* ascsim/sim.h: the simulator's own C interface (not part of ACL).
 * Used by the Rust side to configure simulated devices and read launch
 * reports and traces. Plain C so that bindgen can read it. */
#ifndef ASCSIM_SIM_H
#define ASCSIM_SIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Numbers of one simulated SoC; filled from the Rust SoC profile. */
typedef struct ascsim_soc {
    char name[32];
    uint32_t cube_cores;
    uint32_t vector_cores;
    uint64_t ub_bytes;
    uint64_t l1_bytes;
    uint64_t l0a_bytes;
    uint64_t l0b_bytes;
    uint64_t l0c_bytes;
    uint64_t hbm_bytes;
    uint64_t l2_bytes;
} ascsim_soc;

/* Pipes of one core, as recorded in the trace. */
enum ascsim_pipe {
    ASCSIM_PIPE_S = 0,
    ASCSIM_PIPE_V = 1,
    ASCSIM_PIPE_M = 2,
    ASCSIM_PIPE_MTE1 = 3,
    ASCSIM_PIPE_MTE2 = 4,
    ASCSIM_PIPE_MTE3 = 5,
    ASCSIM_PIPE_FIX = 6,
    ASCSIM_PIPE_NONE = 7
};

/* Kind of trace event. Instructions carry a pipe and sizes; sync events carry
 * their ids and, for cross-core edges, the peer core and sequence number. */
enum ascsim_event_kind {
    ASCSIM_EV_INSTR = 0,
    ASCSIM_EV_SET_FLAG = 1,       /* a: HardEvent, b: event id */
    ASCSIM_EV_WAIT_FLAG = 2,      /* a: HardEvent, b: event id */
    ASCSIM_EV_PIPE_BARRIER = 3,   /* pipe */
    ASCSIM_EV_ENQUE = 4,          /* a: queue id, b: buffer id */
    ASCSIM_EV_DEQUE = 5,          /* a: queue id, b: buffer id */
    ASCSIM_EV_CROSS_SET = 6,      /* a: flag id, b: mode, seq: set sequence */
    ASCSIM_EV_CROSS_WAIT = 7,     /* a: flag id, peer/seq: the set it consumed */
    ASCSIM_EV_SYNC_ALL = 8,       /* seq: barrier round */
    ASCSIM_EV_FREE = 9,           /* a: queue id, b: buffer id (consumer done) */
    ASCSIM_EV_ALLOC = 10          /* a: queue id, b: buffer id (producer waits for FREE) */
};

typedef struct ascsim_event {
    uint8_t kind;      /* ascsim_event_kind */
    uint8_t pipe;      /* ascsim_pipe */
    uint16_t op;       /* index into the op-name table (ascsim_op_name) */
    uint32_t repeats;  /* vector repeats, cube fractal products, DMA bursts;
                          scalar UB accesses: how many in a row (one event) */
    uint64_t bytes;    /* bytes processed on chip or moved by DMA */
    uint64_t gm_addr;  /* first GM byte touched, 0 if none */
    uint64_t gm_bytes; /* GM bytes touched */
    int32_t a;
    int32_t b;
    int32_t peer;      /* peer core of a cross-core edge, -1 if none */
    uint32_t seq;
    uint8_t gm_write;  /* 1 if GM is written */
    uint8_t attr;      /* op detail for the cost model (ascsim_attr), 0 if none */
    uint8_t reserved[6];
} ascsim_event;

/* Values of ascsim_event.attr. Mmad: the size in bytes of its input element
 * (1 int8, 2 half/bfloat16, 4 float). LoadData, LoadDataWithTranspose and
 * InitConstValue into L0: which L0 buffer they fill. */
enum ascsim_attr {
    ASCSIM_ATTR_NONE = 0,
    ASCSIM_ATTR_L0A = 1,
    ASCSIM_ATTR_L0B = 2
};

/* Values of ascsim_launch_info.task. Copy and memset tasks are the stream's
 * aclrtMemcpyAsync, aclrtMemcpy2dAsync and aclrtMemsetAsync: no cores and no
 * trace, only the GM bytes they read and write (the cost model charges them). */
enum ascsim_task {
    ASCSIM_TASK_KERNEL = 0,
    ASCSIM_TASK_COPY = 1,
    ASCSIM_TASK_MEMSET = 2
};

typedef struct ascsim_launch_info {
    char kernel[64];
    uint32_t block_dim;
    uint32_t kernel_type;  /* KernelMetaType */
    uint32_t cores;        /* simulated cores (threads) */
    int32_t status;        /* 0 ok, else an ACL error code */
    uint64_t gm_read_bytes;
    uint64_t gm_write_bytes;
    uint64_t events;
    uint32_t hazards_checked; /* 1 if the hazard checker watched the launch (ASCSIM_HAZARDS) */
    uint32_t task;            /* ascsim_task: a kernel, or a copy or memset task of the stream */
} ascsim_launch_info;

/* Configure the SoC of a simulated device before aclrtSetDevice. */
int32_t ascsim_configure_device(int32_t device_id, const ascsim_soc* soc);

/* Launch reports of a stream, oldest first; cleared by ascsim_clear_launches. */
uint32_t ascsim_launch_count(void* stream);
int32_t ascsim_launch_info_get(void* stream, uint32_t launch, ascsim_launch_info* info);
/* Copies the full diagnostic of a failed launch; returns its length. */
size_t ascsim_launch_error(void* stream, uint32_t launch, char* buf, size_t len);
/* Trace of one core of a launch. Core order: AICs first, then AIVs. */
int32_t ascsim_core_trace(void* stream, uint32_t launch, uint32_t core, const ascsim_event** events,
                          size_t* count, uint32_t* core_kind, uint32_t* block_idx);
void ascsim_clear_launches(void* stream);
const char* ascsim_op_name(uint16_t op);
/* Bytes still allocated on a device (leak check). */
uint64_t ascsim_allocated_bytes(int32_t device_id);
/* Successful aclrtMalloc calls on a device (the allocation counter). */
uint64_t ascsim_malloc_count(int32_t device_id);

#ifdef __cplusplus
}
#endif
#endif
