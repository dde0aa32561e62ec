package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestQoS(t *testing.T) {
	c := New()
	q, err := c.QoS()
	if err != nil || q != DefaultQoS || q.Reliability != Reliable || q.Ordering != Unordered {
		t.Fatalf("default QoS = %v, %v", q, err)
	}
	mustSet(t, c, KeyReliability, "unreliable")
	mustSet(t, c, KeyOrdering, " Ordered ")
	if q, err = c.QoS(); err != nil || q != (QoS{Unreliable, Ordered}) {
		t.Fatalf("QoS = %v, %v", q, err)
	}
	mustSet(t, c, KeyOrdering, "FIFO")
	q, err = c.QoS()
	if !errors.Is(err, ErrBadValue) || q != DefaultQoS || !strings.Contains(err.Error(), KeyOrdering) {
		t.Errorf("QoS with bad ordering = %v, %v", q, err)
	}
	mustSet(t, c, KeyOrdering, "ORDERED")
	mustSet(t, c, KeyReliability, "MOSTLY")
	if _, err = c.QoS(); !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), KeyReliability) {
		t.Errorf("QoS with bad reliability: %v", err)
	}
}

func TestQoSStrings(t *testing.T) {
	if Reliable.String() != "RELIABLE" || Unreliable.String() != "UNRELIABLE" || Reliability(3).String() != "Reliability(3)" {
		t.Error("Reliability.String")
	}
	if Ordered.String() != "ORDERED" || Unordered.String() != "UNORDERED" || Ordering(0).String() != "Ordering(0)" {
		t.Error("Ordering.String")
	}
}

func mustSet(t *testing.T, c *Config, key, value string) {
	t.Helper()
	if err := c.Set(key, value, "test"); err != nil {
		t.Fatal(err)
	}
}

func TestScopeQoS(t *testing.T) {
	tr := newTree(t)
	write(t, tr.system, "[qualityofservice]\nordering = ORDERED\n"+
		"[rsbd.qos]\n/robot/Left-arm/ = reliable, ordered\n/camera = UNRELIABLE\n/ = UNORDERED\n"+
		"/a/b_c/ = ORDERED,UNRELIABLE\nmaxstreams = 5\n")
	c := mustLoad(t, tr.opts())
	got, err := c.ScopeQoS()
	if err != nil {
		t.Fatal(err)
	}
	want := []ScopeQoS{
		{"/", QoS{Reliable, Unordered}},
		{"/a/b_c/", QoS{Unreliable, Ordered}},
		{"/camera/", QoS{Unreliable, Ordered}},
		{"/robot/Left-arm/", QoS{Reliable, Ordered}},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ScopeQoS:\n got %v\nwant %v", got, want)
	}
	if got, err := New().ScopeQoS(); err != nil || len(got) != 0 {
		t.Errorf("ScopeQoS of empty config = %v, %v", got, err)
	}
}

func TestScopeQoSErrors(t *testing.T) {
	tests := []struct{ entries, msg string }{
		{"/a/ = RELIABLE,UNRELIABLE", "unexpected"},
		{"/a/ = ORDERED,ORDERED", "unexpected"},
		{"/a/ = FAST", "unexpected"},
		{"/a/ =", "0 items"},
		{"/a/ = RELIABLE,ORDERED,RELIABLE", "3 items"},
		{"/a//b/ = RELIABLE", "valid RSB scope"},
		{"/a.b/ = RELIABLE", "valid RSB scope"},
		{"/a = RELIABLE\n/a/ = ORDERED", "one entry per scope"},
	}
	for _, tt := range tests {
		tr := newTree(t)
		write(t, tr.system, "[rsbd.qos]\n"+tt.entries+"\n")
		c := mustLoad(t, tr.opts())
		_, err := c.ScopeQoS()
		if !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), tr.system) {
			t.Errorf("%q: err = %v, want ErrBadValue mentioning %q and the file", tt.entries, err, tt.msg)
		}
	}
	c := New()
	mustSet(t, c, KeyReliability, "x")
	if _, err := c.ScopeQoS(); !errors.Is(err, ErrBadValue) {
		t.Errorf("bad global QoS not reported: %v", err)
	}
}
