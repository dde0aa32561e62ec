// Package ddsperf drives Cyclone DDS's ddsperf tool (Debian package
// cyclonedds-tools) as the peer-to-peer reference: a subscriber and a
// publisher process for throughput, a pong and a ping process for round
// trips, reliable, on the loopback interface, and parses their reports.
package ddsperf
