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
//   - rsbd through one daemon with RSB socket clients over TCP and over the
//     daemon's Unix socket, and through two daemons (publisher → daemon A →
//     multicast → daemon B → subscriber): the same figures;
//   - rsbd through one daemon with publisher and subscriber written with
//     rsbd's Go client package (an Informer, a Listener WithoutRetention),
//     the counterpart of nats.go: throughput open loop and round trips,
//     these again with listeners that deliver inline
//     (client.WithInlineDelivery);
//   - Cyclone DDS's ddsperf (reliable, loopback) and NATS (nats-server and
//     nats.go, client → server → client): the same sizes and layout;
//   - raw Go references of what each layout's structure costs: a UDP
//     ping-pong, unicast and over loopback multicast (two processes, the
//     embedded layout), and a relay over TCP and over Unix sockets
//     (pinger → relay → echo, three processes, the one-daemon and NATS
//     layout);
//   - scaling on one daemon: 1, 100 and 10,000 scopes; 1, 100 and 1,000
//     socket listeners with a connection each, 100 and 1,000 multiplexed
//     over one connection (each its own Hello participant, as RSB clients
//     do) and 1,000 over 10 connections; NATS with 1 and 1,000 subscriber
//     connections for context; the memory of an idle embedded
//     subscription, listener connection and shared-connection participant.
//
// Round trips: rsbd and NATS endpoints reply from inside the event handler
// (the ponger republishes, the pinger sends its next ping), so neither pays
// a goroutine hand-off per event that the raw references do not. Every
// system's round trips (but two daemons' and the Go client's, to keep the
// run within ten minutes) run twice: as its processes sleep when idle, and
// again while the bench holds a 0 µs PM QoS request on /dev/cpu_dma_latency
// (idle CPUs poll, as on a host tuned for latency; --no-idle-poll skips it,
// and it is skipped with a note where the device cannot be written). Then
// every system's round trips, all of them, run once more on a busy host:
// one load process of the bench per CPU burns it in bursts (busy.go).
// --only busy alone runs every system's round trips, quiet and busy, and
// nothing else.
//
// Every throughput run probes until the path carries events, sends a
// warm-up burst and then the measured events without a pause; the
// subscriber times first and last measured arrival. A run of a reliable
// system that loses an event is reported as FAIL, not as a rate.
//
// Usage:
//
//	rsbd-bench [--quick] [--md FILE] [--json FILE] [--pin] [--profile-dir DIR] [--only LIST] [--no-idle-poll]
//	           [--latency-only] [--spin-wait D]
package main
