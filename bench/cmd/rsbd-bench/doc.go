// Command rsbd-bench measures rsbd side by side with Cyclone DDS (ddsperf)
// and NATS on this machine in one run and prints one table of every figure
// with the ratio rsbd/peer per row.
//
// What it runs, each side in its own process (the binary re-executes itself
// as an agent, see package agent):
//
//   - rsbd embedded, two processes, peer to peer over loopback multicast,
//     reliable: throughput at 64 B, 1 KiB, 64 KiB and 1 MiB, and ping-pong
//     round trips at 64 B and 1 KiB;
//   - rsbd through one daemon with RSB socket clients, and through two
//     daemons (publisher → daemon A → multicast → daemon B → subscriber):
//     the same figures;
//   - Cyclone DDS's ddsperf (reliable, loopback) and NATS (nats-server and
//     nats.go, client → server → client): the same sizes and layout;
//   - a raw Go UDP ping-pong, the floor of a datagram round trip;
//   - scaling on one daemon: 1, 100 and 10,000 scopes, 1, 100 and 1,000
//     socket listeners, and the memory of an idle subscription.
//
// Every throughput run probes until the path carries events, sends a
// warm-up burst and then the measured events without a pause; the
// subscriber times first and last measured arrival. A run of a reliable
// system that loses an event is reported as FAIL, not as a rate.
//
// Usage:
//
//	rsbd-bench [--quick] [--md FILE] [--json FILE] [--pin] [--profile-dir DIR] [--only LIST]
package main
