package meshmessage

import (
	"testing"

	"github.com/rsbd/rsbd/mesh"
)

// TestTokens checks HELLO's token: a command before HELLO, or a HELLO
// without a known token, gets CodeACLFail and the connection closed; a
// token (as token or as password) admits the client within its prefixes
// only; SetTokens(nil) turns the check off for clients from then on.
func TestTokens(t *testing.T) {
	s, _, addr := startServer(t, Config{Tokens: []mesh.Token{{Value: "secret", Publish: []string{"/pub/"}, Subscribe: []string{"/sub/"}}}})

	early := dial(t, addr)
	early.write("HEARTBEAT_REQUEST", "0", nil)
	early.expect("HEARTBEAT_RESPONSE")
	early.write("SUBSCRIBE_REQUEST", "1", Subscription{Topics: []SubscriptionItem{{Topic: "/sub/"}}})
	if h, _ := early.response("SUBSCRIBE_RESPONSE"); h.Code != CodeACLFail || h.Seq != "1" {
		t.Fatalf("subscribe before HELLO: %+v", h)
	}
	early.closed()

	for _, ua := range []map[string]any{{"subsystem": "5023"}, {"token": "wrong"}, {"password": "secre"}} {
		c := dial(t, addr)
		c.write("HELLO_REQUEST", "1", ua)
		if h, _ := c.response("HELLO_RESPONSE"); h.Code != CodeACLFail {
			t.Fatalf("HELLO %v: %+v", ua, h)
		}
		c.closed()
	}

	for _, ua := range []map[string]any{{"token": "secret"}, {"password": "secret", "username": "u"}} {
		c := dial(t, addr)
		c.write("HELLO_REQUEST", "1", ua)
		c.expect("HELLO_RESPONSE")
		c.write("SUBSCRIBE_REQUEST", "2", Subscription{Topics: []SubscriptionItem{{Topic: "/"}}})
		if h, _ := c.response("SUBSCRIBE_RESPONSE"); h.Code != CodeACLFail {
			t.Fatalf("subscribe outside the prefixes: %+v", h)
		}
		c.write("SUBSCRIBE_REQUEST", "3", Subscription{Topics: []SubscriptionItem{{Topic: "/sub/x/"}}})
		c.expect("SUBSCRIBE_RESPONSE")
		c.write("ASYNC_MESSAGE_TO_SERVER", "4", Message{Topic: "/sub/x/", Body: "b"})
		if h, _ := c.response("ASYNC_MESSAGE_TO_SERVER_ACK"); h.Code != CodeACLFail {
			t.Fatalf("publish outside the prefixes: %+v", h)
		}
		c.write("ASYNC_MESSAGE_TO_SERVER", "5", Message{Topic: "/pub/x/", Body: "b"})
		c.expect("ASYNC_MESSAGE_TO_SERVER_ACK")
		c.write("REQUEST_TO_SERVER", "6", Message{Topic: "/sub/m/", Body: "b"})
		if h, _ := c.response("RESPONSE_TO_CLIENT"); h.Code != CodeACLFail {
			t.Fatalf("request outside the prefixes: %+v", h)
		}
		c.write("SUBSCRIBE_REQUEST", "7", Subscription{Topics: []SubscriptionItem{{Topic: "/sub/m/", Type: "SYNC"}}})
		if h, _ := c.response("SUBSCRIBE_RESPONSE"); h.Code != CodeACLFail {
			t.Fatalf("SYNC subscription without publish rights: %+v", h)
		}
	}

	if err := s.SetTokens([]mesh.Token{{Value: "a b"}}); err == nil {
		t.Fatal("SetTokens took a bad token")
	}
	if err := s.SetTokens(nil); err != nil {
		t.Fatal(err)
	}
	open := dial(t, addr)
	open.write("SUBSCRIBE_REQUEST", "1", Subscription{Topics: []SubscriptionItem{{Topic: "/"}}})
	open.expect("SUBSCRIBE_RESPONSE")

	st := s.Stats()
	if st.Rejected[RejectUnauthorized] != 4 || st.Closed[CloseUnauthorized] != 4 || st.Rejected[RejectForbidden] != 8 || st.Published != 2 {
		t.Fatalf("stats %+v", st)
	}
}
