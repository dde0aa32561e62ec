package client

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/rsbd/rsbd/notification"
)

// TestDetacherCopies: a detached event holds copies of the publisher's
// slices; equal short user infos share one copy, clipped so that an
// append never writes into it; other user infos get copies of their own.
func TestDetacherCopies(t *testing.T) {
	var d detacher
	infos := []notification.UserInfo{{Key: "k", Value: "v"}}
	publish := func(infos []notification.UserInfo) *notification.Event {
		ev := &notification.Event{Data: []byte("data"), Causes: []notification.EventID{{SequenceNumber: 1}}}
		ev.MetaData.UserTimes = []notification.UserTime{{Key: "t", Time: 1}}
		ev.MetaData.UserInfos = infos
		caller := *ev
		d.detach(ev)
		if &ev.Data[0] == &caller.Data[0] || &ev.Causes[0] == &caller.Causes[0] || &ev.MetaData.UserTimes[0] == &caller.MetaData.UserTimes[0] {
			t.Fatal("detached event shares the publisher's data, causes or user times")
		}
		if len(infos) > 0 && &ev.MetaData.UserInfos[0] == &infos[0] {
			t.Fatal("detached event shares the publisher's user infos")
		}
		return ev
	}
	a := publish(infos)
	infos[0].Value = "changed" // the publisher's own slice, reused
	b := publish(infos)
	if v, _ := a.MetaData.UserInfo("k"); v != "v" {
		t.Fatalf("first event's user info k = %q, want v", v)
	}
	if v, _ := b.MetaData.UserInfo("k"); v != "changed" {
		t.Fatalf("second event's user info k = %q, want changed", v)
	}
	c := publish(slices.Clone(infos))
	if &c.MetaData.UserInfos[0] != &b.MetaData.UserInfos[0] {
		t.Error("equal user infos are not shared")
	}
	if cap(c.MetaData.UserInfos) != len(c.MetaData.UserInfos) {
		t.Errorf("shared user infos have room to append: cap %d, len %d", cap(c.MetaData.UserInfos), len(c.MetaData.UserInfos))
	}
	long := make([]notification.UserInfo, sharedInfosMax+1)
	if x, y := publish(long), publish(long); &x.MetaData.UserInfos[0] == &y.MetaData.UserInfos[0] {
		t.Error("user infos longer than sharedInfosMax are shared")
	}
	if ev := publish(nil); ev.MetaData.UserInfos != nil {
		t.Errorf("no user infos became %v", ev.MetaData.UserInfos)
	}
}

// TestDetacherConcurrent: publishers on several goroutines, with user
// infos of their own, each get theirs back.
func TestDetacherConcurrent(t *testing.T) {
	var d detacher
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			infos := []notification.UserInfo{{Key: "g", Value: fmt.Sprint(g)}}
			for range 1000 {
				ev := &notification.Event{}
				ev.MetaData.UserInfos = infos
				d.detach(ev)
				if v, _ := ev.MetaData.UserInfo("g"); v != fmt.Sprint(g) {
					t.Errorf("goroutine %d got user info %q", g, v)
					return
				}
			}
		})
	}
	wg.Wait()
}
