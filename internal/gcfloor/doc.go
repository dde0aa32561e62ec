// Package gcfloor owns the daemon's garbage collector policy: a heap
// floor. Go's default collects each time the heap has doubled since the
// last collection, which for a daemon whose live heap is a few megabytes
// means a collection every few megabytes of events. With a floor, the
// collector stays idle while the heap is below it and above it behaves as
// GOGC would: Start turns GOGC's trigger off and keeps the runtime's soft
// memory limit at the larger of the floor and what GOGC would allow, resetting
// it after every collection.
//
// In a cgroup with a memory limit (a container, a systemd unit with
// MemoryMax), the floor is at most a quarter of that limit
// (EffectiveFloor).
//
// It is a process-wide setting: the daemon binary (and the benchmark's
// daemon processes, to measure what the daemon does) start it; packages
// that embed a node leave the host program's policy alone.
package gcfloor
