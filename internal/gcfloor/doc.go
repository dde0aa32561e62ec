// Package gcfloor owns the daemon's garbage collector policy: a heap
// floor. Go's default collects each time the heap has doubled since the
// last collection, which for a daemon whose live heap is a few megabytes
// means a collection every few megabytes of events. With a floor, the
// collector stays idle while the heap is below it and above it behaves as
// GOGC would: after every collection Start's controller sets GOGC's
// percent so that the next heap goal is the larger of the floor and what
// Config.Percent (as GOGC) allows. It leaves the soft memory limit alone: a limit near
// the heap makes the runtime return freed pages to the kernel while it
// allocates, which the heap then takes back as fresh, faulting pages.
//
// In a cgroup with a memory limit (a container, a systemd unit with
// MemoryMax), the floor is at most a quarter of that limit
// (EffectiveFloor).
//
// It is a process-wide setting: the daemon binary (and the benchmark's
// daemon processes, to measure what the daemon does) start it; packages
// that embed a node leave the host program's policy alone.
package gcfloor
