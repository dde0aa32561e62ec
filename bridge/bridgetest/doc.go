// Package bridgetest holds what the tests of the bridge packages share: a
// bus on an in-process node, a bridge run for the length of a test,
// CloudEvents numbered for order checks, reading events off the bus, and
// broker servers started as child processes (on a free loopback port,
// killed at the end of the test, restartable on the same port).
//
// Beside those: the formats every bridge has (Formats); the binding
// tests' sample event, comparison and refusal check (Sample, SameEvent,
// Refused); receivers and senders driven as the bridge runner drives
// them (Inbound, Next, SendAll, SendStream); and the restart tests' halves
// (PublishAcrossRestart, ReadInOrder, RoundTripAcrossRestart).
package bridgetest
