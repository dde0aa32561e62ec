package notification

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/scope"
)

var benchSizes = []int{64, 1024}

// benchEvent is shaped like what rsb-python informers send.
func benchEvent(size int) *Event {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	return &Event{
		Scope:      scope.MustParse("/robot/arm/state/"),
		WireSchema: ".*",
		Data:       data,
		ID:         EventID{SenderID: mustUUID("5586fd91-901f-4658-90e1-25a8bfac521a"), SequenceNumber: 12345},
		MetaData:   MetaData{CreateTime: 1796021956246876, SendTime: 1796021956246921},
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, size := range benchSizes {
		e := benchEvent(size)
		b.Run(fmt.Sprintf("append/%dB", size), func(b *testing.B) {
			buf := make([]byte, 0, 2048)
			b.SetBytes(int64(NotificationSize(e)))
			for b.Loop() {
				buf = AppendNotification(buf[:0], e)
			}
		})
		b.Run(fmt.Sprintf("marshal/%dB", size), func(b *testing.B) {
			b.SetBytes(int64(NotificationSize(e)))
			for b.Loop() {
				if _, err := Marshal(e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("generated/%dB", size), func(b *testing.B) {
			b.SetBytes(int64(NotificationSize(e)))
			for b.Loop() {
				if _, err := marshalGenerated(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, size := range benchSizes {
		frame, _ := Marshal(benchEvent(size))
		b.Run(fmt.Sprintf("hand/%dB", size), func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				if _, err := DecodeNotification(frame); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("generated/%dB", size), func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				if _, err := unmarshalGenerated(frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRoundTrip measures encode plus decode: the hand codec on Events,
// and for reference the stock generated code on a Notification alone.
func BenchmarkRoundTrip(b *testing.B) {
	for _, size := range benchSizes {
		e := benchEvent(size)
		b.Run(fmt.Sprintf("hand/%dB", size), func(b *testing.B) {
			for b.Loop() {
				out, _ := Marshal(e)
				if _, err := Unmarshal(out); err != nil {
					b.Fatal(err)
				}
			}
		})
		n := ToNotification(e)
		b.Run(fmt.Sprintf("generated-notification/%dB", size), func(b *testing.B) {
			for b.Loop() {
				out, _ := proto.Marshal(n)
				if err := proto.Unmarshal(out, new(rsbpb.Notification)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
