package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/internal/testutil"
	"github.com/rsbd/rsbd/introspection"
	"github.com/rsbd/rsbd/scope"
)

// TestIntrospectDaemonScopes publishes at the first of two daemons on two
// scopes, four times as many events on one, to a listener at the second:
// the daemons' view shows both scopes with those counts (published at the
// first, delivered at the second) and rates in the same ratio, and the
// group of the listener's scope as sent by the first and received by the
// second; the tree prints them.
func TestIntrospectDaemonScopes(t *testing.T) {
	if testing.Short() {
		t.Skip("rsbd processes are not started with -short")
	}
	ds := clienttest.StartDaemons(t, 2)
	tool := processInvoker(testutil.Build(t, "github.com/rsbd/rsbd/cmd/rsb"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pub, err := client.Dial(ctx, ds[0].URI())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := client.Dial(ctx, ds[1].URI())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	l, err := sub.NewListener(scope.MustParse("/rates"))
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	l.AddHandler(func(*client.Event) error { got.Add(1); return nil })
	var sts []introspection.DaemonStatus
	testutil.WaitForMsg(t, 60*time.Second, func() string { return "both daemons, the listener announced" }, func() bool {
		sts = daemonsJSON(t, tool, ds[0].URI())
		return len(sts) == 2 && slices.Contains(sts[1].Listening, "/rates/") && len(sts[0].Peers) == 1
	})
	const fast, slow = 40, 10
	publishN(ctx, t, pub, "/rates/fast", fast)
	publishN(ctx, t, pub, "/rates/slow", slow)
	testutil.WaitFor(t, 60*time.Second, "every event at the listener", func() bool { return got.Load() == fast+slow })

	sts = daemonsJSON(t, tool, ds[0].URI())
	if len(sts) != 2 {
		t.Fatalf("statuses %+v", sts)
	}
	f, s := scopeRow(sts[0], "/rates/fast/"), scopeRow(sts[0], "/rates/slow/")
	if f.PublishedEvents != fast || s.PublishedEvents != slow || f.PublishedBytes <= s.PublishedBytes ||
		f.PublishedEventRate <= s.PublishedEventRate || s.PublishedEventRate <= 0 {
		t.Errorf("publishing daemon's scopes %+v", sts[0].Scopes)
	}
	f, s = scopeRow(sts[1], "/rates/fast/"), scopeRow(sts[1], "/rates/slow/")
	if f.DeliveredEvents != fast || s.DeliveredEvents != slow || f.DeliveredEventRate <= s.DeliveredEventRate || s.DeliveredEventRate <= 0 {
		t.Errorf("delivering daemon's scopes %+v", sts[1].Scopes)
	}
	sent := groupFor(sts[0].Sent, "/rates/")
	if sent == "" || groupFor(sts[1].Received, "/rates/") != sent {
		t.Errorf("groups: sent %+v, received %+v", sts[0].Sent, sts[1].Received)
	}

	r := tool(context.Background(), "", "introspect", "--daemons", ds[1].URI())
	for _, want := range []string{"received groups", "sent groups", sent + " ", "/rates/", "/rates/fast/", "/rates/slow/",
		"published 40 events", "delivered 10 events"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--daemons tree lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
}

// daemonsJSON is rsb introspect --daemons --style json at uri.
func daemonsJSON(t *testing.T, tool invoker, uri string) []introspection.DaemonStatus {
	t.Helper()
	r := tool(context.Background(), "", "introspect", "--daemons", "--style", "json", uri)
	var sts []introspection.DaemonStatus
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &sts) != nil {
		return nil
	}
	return sts
}

func publishN(ctx context.Context, t *testing.T, b *client.Bus, sc string, n int) {
	t.Helper()
	inf, err := b.NewInformer(scope.MustParse(sc))
	if err != nil {
		t.Fatal(err)
	}
	defer inf.Close()
	for range n {
		if _, err := inf.Publish(ctx, []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
	}
}

func scopeRow(st introspection.DaemonStatus, sc string) introspection.ScopeTraffic {
	for _, s := range st.Scopes {
		if s.Scope == sc {
			return s
		}
	}
	return introspection.ScopeTraffic{}
}

// groupFor returns the address of the group serving sc, "" without one.
func groupFor(gs []introspection.Group, sc string) string {
	for _, g := range gs {
		if slices.Contains(g.Scopes, sc) {
			return g.Address
		}
	}
	return ""
}
