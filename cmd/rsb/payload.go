package main

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/scope"
)

// rendered is a payload prepared for printing.
type rendered struct {
	typeName string // Go-side type: void, string, int64, bytes, ...
	text     string // the value as text, when it has one
	binary   []byte // the bytes to dump, when it has no text form
	void     bool
}

// renderPayload describes ev's payload for the printing styles.
func renderPayload(ev *client.Event) rendered {
	switch v := ev.Payload.(type) {
	case nil:
		if ev.PayloadErr != nil {
			return rendered{typeName: "undecoded " + ev.WireSchema, binary: ev.Data}
		}
		return rendered{typeName: "void", void: true}
	case struct{}:
		return rendered{typeName: "void", void: true}
	case string:
		return rendered{typeName: "string", text: v}
	case bool:
		return rendered{typeName: "bool", text: strconv.FormatBool(v)}
	case int32, int64, uint32, uint64:
		return rendered{typeName: fmt.Sprintf("%T", v), text: fmt.Sprint(v)}
	case float32:
		return rendered{typeName: "float32", text: strconv.FormatFloat(float64(v), 'g', -1, 32)}
	case float64:
		return rendered{typeName: "float64", text: strconv.FormatFloat(v, 'g', -1, 64)}
	case scope.Scope:
		return rendered{typeName: "scope", text: v.String()}
	case []byte:
		return rendered{typeName: "bytes", binary: v}
	case proto.Message:
		return rendered{typeName: ev.WireSchema, text: prototext.MarshalOptions{}.Format(v)}
	}
	return rendered{typeName: fmt.Sprintf("%T", ev.Payload), text: fmt.Sprint(ev.Payload)}
}

// hexdump formats up to limit bytes of b, 16 a line: offset, hex, ASCII.
func hexdump(b []byte, limit int, indent string) string {
	var sb strings.Builder
	shown := min(len(b), limit)
	for off := 0; off < shown; off += 16 {
		line := b[off:min(off+16, shown)]
		fmt.Fprintf(&sb, "%s%08x  %-47s  |", indent, off, spacedHex(line))
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			sb.WriteByte(c)
		}
		sb.WriteString("|\n")
	}
	if shown < len(b) {
		fmt.Fprintf(&sb, "%s... %d more bytes\n", indent, len(b)-shown)
	}
	return sb.String()
}

// spacedHex writes bytes as "00 11 22".
func spacedHex(b []byte) string {
	h := hex.EncodeToString(b)
	var sb strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(h[i : i+2])
	}
	return sb.String()
}

// summarize shortens a payload to one line of at most width runes.
func summarize(r rendered, width int) string {
	var s string
	switch {
	case r.void:
		return "<void>"
	case r.binary != nil:
		s = spacedHex(r.binary[:min(len(r.binary), width/3+1)])
	default:
		s = strconv.Quote(r.text)
		if r.typeName != "string" {
			s = strings.Join(strings.Fields(r.text), " ")
		}
	}
	if utf8.RuneCountInString(s) > width {
		s = string([]rune(s)[:width-1]) + "…"
	}
	return s
}
