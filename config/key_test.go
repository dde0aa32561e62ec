package config

import (
	"errors"
	"testing"
)

func TestNormalizeKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"transport.socket.port", "transport.socket.port"},
		{"  Transport.Socket.PORT ", "transport.socket.port"},
		{"rsbd.socket-addr", "rsbd.socket.addr"},
		{"rsbd.socket_addr", "rsbd.socket.addr"},
		{"rsbd.qos./Robot/left-arm_2/", "rsbd.qos./Robot/left-arm_2/"},
		{"A-b_C./X_y-Z", "a.b.c./X_y-Z"},
		{"maxfragmentsize", "maxfragmentsize"},
	}
	for _, tt := range tests {
		got, err := NormalizeKey(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeKey(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		again, err := NormalizeKey(got)
		if err != nil || again != got {
			t.Errorf("NormalizeKey not idempotent on %q: %q, %v", got, again, err)
		}
	}
	for _, bad := range []string{"", "  ", "a b", "a=b", "a#b", "[a]", "a\x00", "ä", "a/b c"} {
		if _, err := NormalizeKey(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("NormalizeKey(%q) err = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestFlagKey(t *testing.T) {
	tests := map[string]string{
		"socket-addr":   KeySocketAddr,
		"--gossip-addr": KeyGossipAddr,
		"metrics-addr":  KeyMetricsAddr,
		"join":          KeyJoin,
		"-multicast":    KeyMulticast,
	}
	for flag, want := range tests {
		if got := FlagKey(flag); got != want {
			t.Errorf("FlagKey(%q) = %q, want %q", flag, got, want)
		}
	}
}

func TestEnvKey(t *testing.T) {
	tests := []struct {
		name string
		want string
		ok   bool
	}{
		{"RSB_TRANSPORT_SOCKET_PORT", "transport.socket.port", true},
		{"RSB_RSBD_SOCKET_ADDR", KeySocketAddr, true},
		{"RSB_QUALITYOFSERVICE_RELIABILITY", KeyReliability, true},
		{"RSB_", "", false},
		{"RSB_CONFIG_FILES", "", false},
		{"RSB_CONFIG_DEBUG", "", false},
		{"rsb_transport_socket_port", "", false},
		{"HOME", "", false},
		{"RSB_A B", "", false},
		{"RSB_RSBD_QOS_/a/", "", false},
	}
	for _, tt := range tests {
		got, ok := EnvKey(tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("EnvKey(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
