package main

import (
	"testing"

	"github.com/rsbd/rsbd/config"
)

// FuzzSettingsFile: any configuration file, read as rsbd reads its
// files (built-in defaults below it, RSB's socket port rule on top), gives
// settings or an error, never a panic; settings it accepts validate.
func FuzzSettingsFile(f *testing.F) {
	for _, s := range []string{
		"[rsbd]\njoin = 10.0.0.1:7946\nsocket.allow = 10.0.0.0/8, 127.0.0.1\nsocket.path.mode = 0660\n",
		"[rsbd.qos]\n/robot/arm/ = ORDERED\n/camera/ = UNRELIABLE,UNORDERED\n",
		"[transport.socket]\nport = 4444\npath = /run/rsb.sock\n",
		"[rsbd]\nmax.datagram = 65507\ngroup.pool = 239.1.1.1:1\ngroup.pool.size = 0\n",
		"[rsbd]\nsocket.addr = off\nmetrics.addr = [::1]:0\nnack.give.up = -1s\n",
		"[qualityofservice]\nreliability = UNRELIABLE\nordering = bogus\n",
		"[rsbd.gateway.webhook.a]\nscope = /x/\nurl = http://h/\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := config.Parse(data, "fuzz.conf")
		if err != nil {
			return
		}
		c := config.New()
		for k, v := range defaults() {
			if err := c.SetDefault(k, v); err != nil {
				t.Fatal(err)
			}
		}
		for _, e := range entries {
			if isFileKey(e.Key) {
				continue // no files read by name from fuzzed input
			}
			if err := c.Set(e.Key, e.Value, "fuzz.conf"); err != nil {
				return
			}
		}
		if err := socketFromRSB(c); err != nil {
			return
		}
		s, err := parseSettings(c)
		if err != nil {
			return // a bad value, reported by key
		}
		if err := s.node.Validate(); err != nil {
			t.Fatalf("accepted settings do not validate: %v", err)
		}
	})
}

// isFileKey reports the keys that name files rsbd reads.
func isFileKey(k string) bool {
	switch k {
	case keyGatewayTLSCert, keyGatewayTLSKey, keyGatewayClientCA, keyGatewayTokenFile, keyReadyFile:
		return true
	}
	return false
}
