package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/rsbd/rsbd/internal/testutil"
)

// TestReadyFileSchema: the ready file decodes into testutil.ReadyInfo, the
// tests' reading of it, field for field and back.
func TestReadyFileSchema(t *testing.T) {
	info := readyInfo{PID: 1, Version: "v", Socket: "s", SocketPath: "p", Gossip: "g", Data: "d", Metrics: "m", Gateway: "w", MeshMessage: "mm",
		Web: "web"}
	v := reflect.ValueOf(info)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("set %s here too, so that the comparison covers it", v.Type().Field(i).Name)
		}
	}
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var got testutil.ReadyInfo
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("testutil.ReadyInfo lacks a field of %s: %v", b, err)
	}
	back, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, b) {
		t.Fatalf("testutil.ReadyInfo writes %s, rsbd %s", back, b)
	}
}
