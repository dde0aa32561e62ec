package main

// The MQTT, RabbitMQ, AMQP 1.0 and Pulsar broker kinds register
// themselves with package bridge when the daemon links them.
import (
	_ "github.com/rsbd/rsbd/bridge/amqp091" // registers kind rabbitmq
	_ "github.com/rsbd/rsbd/bridge/amqp1"   // registers kind amqp
	_ "github.com/rsbd/rsbd/bridge/mqtt"    // registers kind mqtt
	_ "github.com/rsbd/rsbd/bridge/pulsar"  // registers kind pulsar
)
