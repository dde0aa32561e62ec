package gcfloor

// DefaultFloorMiB is the daemon's heap floor. Measured with one publisher
// and one subscriber through one daemon (docs/BENCHMARKS.md, steps 33 and
// 49), a floor raised 64 KiB and 1 MiB event throughput by about a fifth
// over Go's default, 128 MiB a little more than 64. The price is memory:
// the heap grows to the floor before a collection, and the runtime keeps
// the memory it freed up to near the floor. In `--only daemon` runs the
// heap peaked at 111 MB with 128 MiB (129-132 collections); a limit that
// counted the freed pages (before step 49) let it reach 193 MB (117).
// Until step 64 the floor was a soft memory limit, and the runtime
// returned 60-650 MB of freed pages per `--only daemon` or `daemonc` run
// to the kernel while it allocated (GODEBUG=scavtrace=1), to take them
// back as fresh pages; with GOGC none.
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
