package gcfloor

// DefaultFloorMiB is the daemon's heap floor. A daemon's live heap is a few
// megabytes, so Go's default collector would run every few megabytes of
// events; below the floor it stays idle. That raises the daemon's
// throughput of large events, and 128 MiB raises it more than 64 MiB
// (docs/TUNING.md). The price is
// memory: the heap grows to the floor before a collection, and the runtime
// keeps the memory it freed up to near the floor. The floor is set through
// GOGC's percent, not a soft memory limit, so the runtime does not hand
// freed pages back to the kernel while it allocates only to fault them in
// again (see the package comment).
const DefaultFloorMiB = 128

// DefaultPercent is the heap growth allowed above the floor between
// collections, as GOGC: 100, Go's own default.
const DefaultPercent = 100

// minHeap is the Go runtime's minimum heap goal at GOGC=100 (4 MiB; it
// scales with GOGC). A percent whose minimum passes the floor would put
// the goal above it; TestGoalIsTheFloor fails if the runtime changes it.
const minHeap = 4 << 20

// maxPercent bounds the GOGC percent the floor sets, well inside the
// runtime's int32.
const maxPercent = 1 << 24

// sentinelSize keeps the object whose cleanup tells of a finished
// collection out of the tiny allocator, which would tie its lifetime to
// its neighbours'.
const sentinelSize = 32

// cgroupShare: the floor is at most this fraction (1/cgroupShare) of the
// memory limit of the process's cgroup, leaving the rest to the live heap,
// the runtime, the kernel's socket buffers and whatever else shares it.
const cgroupShare = 4

// cgroupRoot is where the cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// unlimitedCgroup: cgroup v1 reports "no limit" as a page-rounded
// 2^63-1; any limit this large is none.
const unlimitedCgroup = 1 << 62
