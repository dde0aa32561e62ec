// Package meshtest holds what the benchmarks of the mesh listeners share:
// the payload sizes they measure, socket clients of an in-process node, a
// publisher on the bus, a reader that events already reach, and the loop
// that times one event from send to receipt and reports its median, 99th
// percentile and rate.
//
// Only tests import it.
package meshtest
