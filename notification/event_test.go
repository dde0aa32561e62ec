package notification

import (
	"testing"

	"github.com/rsbd/rsbd/scope"
)

func TestMetaDataLookups(t *testing.T) {
	var m MetaData
	if _, ok := m.UserTime("x"); ok {
		t.Fatal("empty meta data has a user time")
	}
	if _, ok := m.UserInfo("x"); ok {
		t.Fatal("empty meta data has a user info")
	}
	m.SetUserTime("request.send", 10)
	m.SetUserTime("request.receive", 20)
	m.SetUserTime("request.send", 11)
	m.SetUserInfo("rsb:error?", "1")
	m.SetUserInfo("rsb:error?", "")
	if v, ok := m.UserTime("request.send"); !ok || v != 11 {
		t.Errorf("UserTime(request.send) = %d, %v", v, ok)
	}
	if v, ok := m.UserTime("request.receive"); !ok || v != 20 {
		t.Errorf("UserTime(request.receive) = %d, %v", v, ok)
	}
	if v, ok := m.UserInfo("rsb:error?"); !ok || v != "" {
		t.Errorf("UserInfo(rsb:error?) = %q, %v", v, ok)
	}
	if len(m.UserTimes) != 2 || m.UserTimes[0].Key != "request.send" || len(m.UserInfos) != 1 {
		t.Errorf("set kept order badly: %+v", m)
	}
	m.UserInfos = append(m.UserInfos, UserInfo{Key: "rsb:error?", Value: "second"})
	if v, _ := m.UserInfo("rsb:error?"); v != "" {
		t.Errorf("lookup of a repeated key returned %q, want the first entry", v)
	}
}

func TestEqualAndClone(t *testing.T) {
	base := func() *Event {
		return &Event{
			Scope: scope.MustParse("/a/b/"), Method: "REQUEST", WireSchema: "void",
			ID:       EventID{SequenceNumber: 3},
			Causes:   []EventID{{SequenceNumber: 1}},
			MetaData: MetaData{CreateTime: 1, SendTime: 2, UserInfos: []UserInfo{{"k", "v"}}},
		}
	}
	a := base()
	c := a.Clone()
	if !a.Equal(c) || !a.Equal(base()) {
		t.Fatal("clone or rebuild is not equal")
	}
	c.MetaData.UserInfos[0].Value = "changed"
	c.Causes[0].SequenceNumber = 9
	if a.MetaData.UserInfos[0].Value != "v" || a.Causes[0].SequenceNumber != 1 {
		t.Fatal("Clone shares slices with the original")
	}
	tests := []struct {
		name string
		mod  func(e *Event)
		eq   bool
	}{
		{"nil data vs empty data", func(e *Event) { e.Data = []byte{} }, true},
		{"empty data present", func(e *Event) { e.Present |= HasData }, false},
		{"method flag on non-empty method", func(e *Event) { e.Present |= HasMethod }, true},
		{"meta flag with times set", func(e *Event) { e.Present |= HasMetaData }, true},
		{"receive time present", func(e *Event) { e.Present |= HasReceiveTime }, false},
		{"scope", func(e *Event) { e.Scope = scope.Root }, false},
		{"cause", func(e *Event) { e.Causes = nil }, false},
		{"user info", func(e *Event) { e.MetaData.UserInfos[0].Key = "x" }, false},
		{"id", func(e *Event) { e.ID.SenderID[15] = 1 }, false},
	}
	for _, tt := range tests {
		e := base()
		tt.mod(e)
		if got := a.Equal(e); got != tt.eq {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.eq)
		}
	}
	var nilEvent *Event
	if nilEvent.Equal(a) || !nilEvent.Equal(nil) {
		t.Error("Equal with nil events")
	}
}
