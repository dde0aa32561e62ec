package main

import (
	"errors"
	"testing"

	"github.com/rsbd/rsbd/config"
)

// TestGatewayAgentsSetting: --gateway-a2a takes off, on or the default
// agent's scope; anything else is a configuration error naming the key.
func TestGatewayAgentsSetting(t *testing.T) {
	for arg, want := range map[string]gatewayAgents{
		"off": {}, "on": {on: true}, "/agents/echo": {on: true, defaultAgent: "/agents/echo/"},
	} {
		s, _ := mustSettings(t, "", nil, "--gateway-a2a", arg)
		if s.gatewayAgents != want {
			t.Errorf("--gateway-a2a %s: %+v, want %+v", arg, s.gatewayAgents, want)
		}
	}
	if s, _ := mustSettings(t, "", nil); s.gatewayAgents.on {
		t.Error("agents served by default")
	}
	c, err := load(t, "", nil, "--gateway-a2a", "not a scope")
	if err != nil {
		t.Fatal(err)
	}
	var ve *config.ValueError
	if _, err := parseSettings(c); !errors.As(err, &ve) || ve.Key != keyGatewayA2A {
		t.Errorf("bad scope: %v", err)
	}
}
