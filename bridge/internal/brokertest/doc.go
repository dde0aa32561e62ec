// Package brokertest starts the real brokers the bridge tests run against:
// Debian's mosquitto and rabbitmq-server (with its AMQP 1.0 plugin), each
// on a free loopback port with its files in a temporary directory, each
// restartable on the same port and data (the tests that restart a broker
// in the middle of a stream), each killed by the process id it started.
//
// A RabbitMQ node takes seconds to boot, so a test package shares one
// through Shared, and its TestMain is Main, which stops the node after
// the tests (StopShared); a test that restarts the broker starts its own
// with StartRabbitMQ. Channel091 and FreshQueue give a test a plain AMQP
// 0.9.1 channel to a node and an empty durable queue.
//
// Only tests import it.
package brokertest
