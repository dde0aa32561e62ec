package config

import (
	"errors"
	"testing"
)

// FuzzScopeQoS: the QoS keys of any configuration file give the global QoS
// and the per-scope overrides or an ErrBadValue, never a panic; each
// override's scope is a normalized RSB scope ("/" or "/a/b/") and its QoS
// takes only the known values.
func FuzzScopeQoS(f *testing.F) {
	for _, s := range []string{
		"[qualityofservice]\nreliability = UNRELIABLE\nordering = ORDERED\n",
		"[rsbd.qos]\n/robot/arm/ = ORDERED\n/camera/ = UNRELIABLE,UNORDERED\n/ = RELIABLE\n",
		"[rsbd.qos]\n/a = ORDERED\n/a/ = UNORDERED\n",
		"[rsbd.qos]\n/a//b/ = ORDERED,ORDERED\n/x y/ = RELIABLE,\n",
		"[qualityofservice]\nreliability = reliable\n[rsbd.qos]\n/ä/ = ordered\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(data, "fuzz.conf")
		if err != nil {
			return
		}
		c := New()
		for _, e := range entries {
			if err := c.Set(e.Key, e.Value, "fuzz.conf"); err != nil {
				return
			}
		}
		overrides, err := c.ScopeQoS()
		if err != nil {
			if !errors.Is(err, ErrBadValue) {
				t.Fatalf("error %v does not wrap ErrBadValue", err)
			}
			return
		}
		for _, o := range overrides {
			if n, ok := normalizeScope(o.Scope); !ok || n != o.Scope || o.Scope[0] != '/' || o.Scope[len(o.Scope)-1] != '/' {
				t.Fatalf("override scope %q not normalized", o.Scope)
			}
			if (o.QoS.Reliability != Reliable && o.QoS.Reliability != Unreliable) || (o.QoS.Ordering != Ordered && o.QoS.Ordering != Unordered) {
				t.Fatalf("override %+v has an unnamed value", o)
			}
		}
	})
}
