package engine

import (
	"errors"
	"testing"
)

// TestConfigDefaults: the zero Config stands for DefaultConfig and
// validates; bad bounds are refused with ErrConfig, an Env without its
// parts with ErrEnv.
func TestConfigDefaults(t *testing.T) {
	def := DefaultConfig()
	if def.MaxDatagram != DefaultMaxDatagram || def.PublishQueue != DefaultPublishQueue ||
		def.ReceiveQueueBytes != DefaultReceiveQueueBytes || def.MaxSenders != DefaultMaxSenders {
		t.Fatalf("defaults %+v", def)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	for name, c := range map[string]Config{
		"tiny datagram":   {MaxDatagram: 100},
		"negative queue":  {PublishQueue: -1},
		"negative rcvbuf": {RecvBuffer: -1},
	} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	if _, err := New(Config{}, Env{}); !errors.Is(err, ErrEnv) {
		t.Fatalf("empty Env: %v, want ErrEnv", err)
	}
	if w := FlowWindow(Config{}); w < MinFlowWindow {
		t.Fatalf("window of the zero config %d", w)
	}
}
