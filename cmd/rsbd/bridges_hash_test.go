package main

import (
	"bytes"
	"strings"
	"testing"
)

// A '#' in a quoted value of a file reaches the bridges: an MQTT
// multi-level filter and a RabbitMQ binding key. An unquoted '#' still
// starts a comment, and --print-config writes such values quoted.
func TestBridgeSettingsQuotedHash(t *testing.T) {
	file := "[bridge.plant]\nkind = mqtt\nurl = mqtt://127.0.0.1:1883\n" +
		"in.address = \"plant/commands/#\"  # every command\nin.scope = /commands/\n" +
		"[bridge.shop]\nkind = rabbitmq\nurl = amqp://guest:guest@127.0.0.1:5672/\n" +
		"in.address = rsbd-orders # the queue\nbind = \"amq.topic/orders.#\"\nin.scope = /orders/\n"
	s, c := mustSettings(t, file, nil)
	if len(s.bridges) != 2 {
		t.Fatalf("bridges %+v", s.bridges)
	}
	plant, shop := s.bridges[0], s.bridges[1]
	if plant.In.Address != "plant/commands/#" || shop.In.Address != "rsbd-orders" || shop.Options["bind"] != "amq.topic/orders.#" {
		t.Fatalf("plant in %q; shop in %q, options %v", plant.In.Address, shop.In.Address, shop.Options)
	}
	var dump bytes.Buffer
	if err := c.Dump(&dump); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`bridge.plant.in.address = "plant/commands/#"  # `, `bridge.shop.bind = "amq.topic/orders.#"  # `} {
		if !strings.Contains(dump.String(), want) {
			t.Errorf("--print-config lacks %s:\n%s", want, dump.String())
		}
	}
}
