package notification

import (
	"errors"
	"testing"
)

func TestEventIDUUIDVectors(t *testing.T) {
	// The event-id vectors of the RSB specification.
	tests := []struct {
		sender string
		seq    uint32
		want   string
	}{
		{"D8FBFEF4-4EB0-4C89-9716-C425DED3C527", 0, "84f43861-433f-5253-afbb-a613a5e04d71"},
		{"BF948D47-618F-4B04-AAC5-0AB5A1A79267", 378, "bd27be7d-87de-5336-beca-44fc60de46a0"},
	}
	for _, tt := range tests {
		sender, err := ParseUUID(tt.sender)
		if err != nil {
			t.Fatal(err)
		}
		id := EventID{SenderID: sender, SequenceNumber: tt.seq}
		if got := FormatUUID(id.UUID()); got != tt.want {
			t.Errorf("UUID of %s seq %d = %s, want %s", tt.sender, tt.seq, got, tt.want)
		}
	}
}

func TestUUIDv5Name(t *testing.T) {
	// The name is the 8-digit lowercase hex sequence number: 378 is "0000017a".
	sender, _ := ParseUUID("BF948D47-618F-4B04-AAC5-0AB5A1A79267")
	want := UUIDv5(sender, []byte("0000017a"))
	if got := (EventID{SenderID: sender, SequenceNumber: 378}).UUID(); got != want {
		t.Fatalf("UUID = %s, want %s", FormatUUID(got), FormatUUID(want))
	}
	max := UUIDv5(sender, []byte("ffffffff"))
	if got := (EventID{SenderID: sender, SequenceNumber: 0xffffffff}).UUID(); got != max {
		t.Fatalf("UUID of seq 2^32-1 = %s, want %s", FormatUUID(got), FormatUUID(max))
	}
}

func TestParseUUID(t *testing.T) {
	good := []struct{ in, out string }{
		{"00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"},
		{"D8FBFEF4-4EB0-4C89-9716-C425DED3C527", "d8fbfef4-4eb0-4c89-9716-c425ded3c527"},
		{"d8fbfef4-4eb0-4c89-9716-c425ded3c527", "d8fbfef4-4eb0-4c89-9716-c425ded3c527"},
	}
	for _, tt := range good {
		u, err := ParseUUID(tt.in)
		if err != nil {
			t.Fatalf("ParseUUID(%q): %v", tt.in, err)
		}
		if got := FormatUUID(u); got != tt.out {
			t.Errorf("FormatUUID(ParseUUID(%q)) = %q, want %q", tt.in, got, tt.out)
		}
	}
	bad := []string{
		"", "d8fbfef44eb04c899716c425ded3c527", "d8fbfef4-4eb0-4c89-9716-c425ded3c52",
		"d8fbfef4-4eb0-4c89-9716-c425ded3c5277", "d8fbfef4x4eb0-4c89-9716-c425ded3c527",
		"g8fbfef4-4eb0-4c89-9716-c425ded3c527", "d8fbfef4-4eb0-4c89-9716-c425ded3c52-",
	}
	for _, in := range bad {
		if _, err := ParseUUID(in); !errors.Is(err, ErrBadUUID) {
			t.Errorf("ParseUUID(%q) error = %v, want ErrBadUUID", in, err)
		}
	}
}

func TestNewParticipantID(t *testing.T) {
	a, b := NewParticipantID(), NewParticipantID()
	if a == b {
		t.Fatal("two participant ids are equal")
	}
	for _, u := range [][16]byte{a, b} {
		if u[6]>>4 != 4 || u[8]>>6 != 2 {
			t.Errorf("%s is not an RFC 4122 version 4 UUID", FormatUUID(u))
		}
	}
}

func TestEventIDString(t *testing.T) {
	sender, _ := ParseUUID("d8fbfef4-4eb0-4c89-9716-c425ded3c527")
	id := EventID{SenderID: sender, SequenceNumber: 4294967295}
	s := id.String()
	if s != "d8fbfef4-4eb0-4c89-9716-c425ded3c527:4294967295" {
		t.Fatalf("String() = %q", s)
	}
	back, err := ParseEventID(s)
	if err != nil || back != id {
		t.Fatalf("ParseEventID(%q) = %v, %v", s, back, err)
	}
	for _, in := range []string{"d8fbfef4-4eb0-4c89-9716-c425ded3c527", "d8fbfef4-4eb0-4c89-9716-c425ded3c527:x",
		"d8fbfef4-4eb0-4c89-9716-c425ded3c527:4294967296", "nope:1"} {
		if _, err := ParseEventID(in); !errors.Is(err, ErrBadUUID) {
			t.Errorf("ParseEventID(%q) error = %v, want ErrBadUUID", in, err)
		}
	}
}

func BenchmarkEventIDUUID(b *testing.B) {
	id := EventID{SenderID: NewParticipantID(), SequenceNumber: 378}
	for b.Loop() {
		_ = id.UUID()
	}
}
