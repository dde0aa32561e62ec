package client

import (
	"testing"
	"time"

	"github.com/rsbd/rsbd/notification"
)

// TestPublishDoesNotKeepTheCallersMetaData: causes, user times and user
// infos may be changed in place once PublishEvent returns, as Data may;
// a listener on the publishing Bus (which gets the event without the
// network, after the publish returned: it is queued) and one on another
// Bus (which gets the encoding) both see what was published.
func TestPublishDoesNotKeepTheCallersMetaData(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		b, other := e.connect(t, 0), e.connect(t, 0)
		sc := mustScope("/reuse-meta/" + e.name + "/")
		awaitRoute(t, b, other, sc)
		local, err := b.NewListener(sc, WithQueue(64, DropNewest))
		if err != nil {
			t.Fatal(err)
		}
		remote, err := other.NewListener(sc, WithQueue(64, DropNewest))
		if err != nil {
			t.Fatal(err)
		}
		gotLocal, gotRemote := collectEvents(t, local), collectEvents(t, remote)
		awaitRoute(t, b, other, sc)
		inf, err := b.NewInformer(sc)
		if err != nil {
			t.Fatal(err)
		}
		cause := notification.EventID{SenderID: [16]byte{1}, SequenceNumber: 7}
		ev := &Event{Payload: "x"}
		ev.Causes = []notification.EventID{cause}
		ev.MetaData.UserTimes = []notification.UserTime{{Key: "t", Time: 42}}
		ev.MetaData.UserInfos = []notification.UserInfo{{Key: "k", Value: "v"}}
		if err := inf.PublishEvent(bg(), ev); err != nil {
			t.Fatal(err)
		}
		ev.Causes[0] = notification.EventID{}
		ev.MetaData.UserTimes[0] = notification.UserTime{Key: "changed", Time: 1}
		ev.MetaData.UserInfos[0] = notification.UserInfo{Key: "changed", Value: "changed"}
		for name, ch := range map[string]<-chan *Event{"local": gotLocal, "remote": gotRemote} {
			got := next(t, ch)
			if len(got.Causes) != 1 || got.Causes[0] != cause {
				t.Errorf("%s: causes %v, want [%v]", name, got.Causes, cause)
			}
			if v, ok := got.MetaData.UserTime("t"); !ok || v != 42 {
				t.Errorf("%s: user time t = %d, %v; want 42", name, v, ok)
			}
			if v, ok := got.MetaData.UserInfo("k"); !ok || v != "v" {
				t.Errorf("%s: user info k = %q, %v; want v", name, v, ok)
			}
		}
	})
}

// TestWithoutConversion: a listener or reader WithoutConversion gets events
// with Data as sent and neither Payload nor PayloadErr, even for a wire
// schema the registry does not know; a listener without it on the same
// Bus still gets the converted payload.
func TestWithoutConversion(t *testing.T) {
	forEnvs(t, 1, func(t *testing.T, e env) {
		b := e.connect(t, 0)
		sc := mustScope("/raw/" + e.name + "/")
		raw, err := b.NewListener(sc, WithoutConversion())
		if err != nil {
			t.Fatal(err)
		}
		conv, err := b.NewListener(sc)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := b.NewReader(sc, WithoutConversion())
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		gotRaw, gotConv := collectEvents(t, raw), collectEvents(t, conv)
		inf, err := b.NewInformer(sc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inf.Publish(bg(), []byte("payload")); err != nil {
			t.Fatal(err)
		}
		unknown := &Event{Event: notification.Event{WireSchema: "no-such-schema", Data: []byte("opaque")}}
		if err := inf.PublishEvent(bg(), unknown); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"payload", "opaque"} {
			for name, ev := range map[string]*Event{
				"listener": next(t, gotRaw), "reader": readSkippingProbes(t, rd, 10*time.Second),
			} {
				if string(ev.Data) != want || ev.Payload != nil || ev.PayloadErr != nil {
					t.Errorf("%s: Data %q, Payload %v, PayloadErr %v; want %q, nil, nil", name, ev.Data, ev.Payload, ev.PayloadErr, want)
				}
			}
		}
		if ev := next(t, gotConv); string(ev.Payload.([]byte)) != "payload" {
			t.Errorf("converting listener: Payload %v, want payload", ev.Payload)
		}
		if ev := next(t, gotConv); ev.PayloadErr == nil {
			t.Errorf("converting listener: no PayloadErr for an unknown schema")
		}
	})
}
