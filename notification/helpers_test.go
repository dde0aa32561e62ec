package notification

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
)

// marshalGenerated encodes e through the generated code with deterministic
// marshalling; AppendNotification must produce the same bytes.
func marshalGenerated(e *Event) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(ToNotification(e))
}

// unmarshalGenerated decodes b through the generated code (leaving the
// required-field checks to FromNotification); DecodeNotification must accept
// and reject the same inputs and return the same events.
func unmarshalGenerated(b []byte) (*Event, error) {
	var n rsbpb.Notification
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return FromNotification(&n)
}

// unhex decodes hex digits, ignoring white space and quoted ASCII text
// ("..."), which is copied as is.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var out []byte
	for len(s) > 0 {
		switch {
		case s[0] == '"':
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				t.Fatalf("unterminated string in %q", s)
			}
			out = append(out, s[1:1+end]...)
			s = s[end+2:]
		case s[0] == ' ' || s[0] == '\n' || s[0] == '\t':
			s = s[1:]
		default:
			b, err := hex.DecodeString(s[:2])
			if err != nil {
				t.Fatalf("bad hex %q: %v", s[:2], err)
			}
			out = append(out, b...)
			s = s[2:]
		}
	}
	return out
}

// The 80-byte Notification body captured from a real rsb-python informer
// (rsb-protocol.md §10), after the 4-byte length 50 00 00 00.
const pythonFrameHex = `
32 0d "/example/sub/" 3a 0c "utf-8-string" 4a 06 "hello0"
7a 12 10 dc fa d7 95 8f af 98 03 18 89 fb d7 95 8f af 98 03
e2 06 14 0a 10 55 86 fd 91 90 1f 46 58 90 e1 25 a8 bf ac 52 1a 10 00`

// An RPC error reply laid out as rsb-python sends it (rsb-protocol.md §10),
// with the request and replier ids and the times filled in; 127 bytes.
const rpcErrorReplyHex = `
32 0e "/rpc/svc/fail/" 3a 0c "utf-8-string" 4a 06 "boom x"
6a 14 0a 10 d8 fb fe f4 4e b0 4c 89 97 16 c4 25 de d3 c5 27 10 00
72 05 "REPLY"
7a 23 10 dc fa d7 95 8f af 98 03 18 89 fb d7 95 8f af 98 03 3a 0f 0a 0a "rsb:error?" 12 01 "1"
e2 06 14 0a 10 bf 94 8d 47 61 8f 4b 04 aa c5 0a b5 a1 a7 92 67 10 00`

func mustUUID(s string) [16]byte {
	u, err := ParseUUID(s)
	if err != nil {
		panic(err)
	}
	return u
}
