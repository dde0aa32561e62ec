package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
)

// formatter prints one event in a logger style.
type formatter func(w io.Writer, ev *client.Event) error

// timeLayout prints RSB's microsecond timestamps.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// formatTime prints an RSB timestamp, or "-" when it is unset.
func formatTime(us int64) string {
	if us == 0 {
		return "-"
	}
	return client.Time(us).Format(timeLayout)
}

// formatDetailed prints an event block: header fields, timestamps, user
// infos, payload, then a separator line.
func formatDetailed(w io.Writer, ev *client.Event) error {
	var sb strings.Builder
	row := func(k, v string) { fmt.Fprintf(&sb, "  %-13s %s\n", k, v) }
	sb.WriteString("Event\n")
	row("Scope", ev.Scope.String())
	row("Id", notification.FormatUUID(ev.ID.UUID()))
	row("Sequence", fmt.Sprint(ev.ID.SequenceNumber))
	row("Method", orNone(ev.Method))
	row("Wire schema", orNone(ev.WireSchema))
	row("Origin", notification.FormatUUID(ev.ID.SenderID))
	for i, c := range ev.Causes {
		label := ""
		if i == 0 {
			label = "Causes"
		}
		row(label, c.String())
	}
	sb.WriteString("Timestamps\n")
	md := ev.MetaData
	row("Create", formatTime(md.CreateTime))
	row("Send", formatTime(md.SendTime))
	row("Receive", formatTime(md.ReceiveTime))
	row("Deliver", formatTime(md.DeliverTime))
	for _, ut := range md.UserTimes {
		row(ut.Key, formatTime(int64(ut.Time)))
	}
	if len(md.UserInfos) > 0 {
		sb.WriteString("Meta-data\n")
		for _, ui := range md.UserInfos {
			row(ui.Key, ui.Value)
		}
	}
	r := renderPayload(ev)
	fmt.Fprintf(&sb, "Payload: %s, %d bytes\n", r.typeName, len(ev.Data))
	switch {
	case r.void:
	case r.binary != nil:
		sb.WriteString(hexdump(r.binary, hexdumpLimit, "  "))
	default:
		for line := range strings.Lines(r.text) {
			sb.WriteString("  " + strings.TrimSuffix(line, "\n") + "\n")
		}
	}
	sb.WriteString(strings.Repeat("-", separatorWidth) + "\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// formatCompact prints one line: send time, scope, method, wire schema,
// origin prefix, size and a payload summary.
func formatCompact(w io.Writer, ev *client.Event) error {
	origin := notification.FormatUUID(ev.ID.SenderID)[:8]
	_, err := fmt.Fprintf(w, "%s %s %s %s %s %d %s\n", formatTime(ev.MetaData.SendTime), ev.Scope,
		orDash(ev.Method), orDash(ev.WireSchema), origin, len(ev.Data), summarize(renderPayload(ev), compactPayloadWidth))
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// formatPayload prints only the payload: text followed by a newline, bytes
// as they are, nothing for void.
func formatPayload(w io.Writer, ev *client.Event) error {
	r := renderPayload(ev)
	var err error
	switch {
	case r.void:
	case r.binary != nil:
		_, err = w.Write(r.binary)
	default:
		_, err = io.WriteString(w, r.text+"\n")
	}
	return err
}

// jsonEvent is the json style's object.
type jsonEvent struct {
	Scope          string            `json:"scope"`
	ID             string            `json:"id"`
	Origin         string            `json:"origin"`
	SequenceNumber uint32            `json:"sequence_number"`
	Method         string            `json:"method,omitempty"`
	WireSchema     string            `json:"wire_schema"`
	Causes         []string          `json:"causes,omitempty"`
	Timestamps     map[string]string `json:"timestamps"`
	MetaData       map[string]string `json:"meta_data,omitempty"`
	PayloadType    string            `json:"payload_type"`
	PayloadLength  int               `json:"payload_length"`
	Payload        any               `json:"payload"`
	Encoding       string            `json:"payload_encoding,omitempty"`
}

// formatJSON prints one JSON object on one line.
func formatJSON(w io.Writer, ev *client.Event) error {
	md := ev.MetaData
	j := jsonEvent{
		Scope: ev.Scope.String(), ID: notification.FormatUUID(ev.ID.UUID()),
		Origin: notification.FormatUUID(ev.ID.SenderID), SequenceNumber: ev.ID.SequenceNumber,
		Method: ev.Method, WireSchema: ev.WireSchema, PayloadLength: len(ev.Data),
		Timestamps: map[string]string{},
	}
	for _, c := range ev.Causes {
		j.Causes = append(j.Causes, c.String())
	}
	for k, us := range map[string]int64{"create": md.CreateTime, "send": md.SendTime, "receive": md.ReceiveTime, "deliver": md.DeliverTime} {
		if us != 0 {
			j.Timestamps[k] = formatTime(us)
		}
	}
	for _, ut := range md.UserTimes {
		j.Timestamps[ut.Key] = formatTime(int64(ut.Time))
	}
	if len(md.UserInfos) > 0 {
		j.MetaData = make(map[string]string, len(md.UserInfos))
		for _, ui := range md.UserInfos {
			j.MetaData[ui.Key] = ui.Value
		}
	}
	j.PayloadType, j.Payload, j.Encoding = jsonPayload(ev)
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// jsonPayload maps a payload to a JSON value: numbers, booleans and strings
// as themselves, void as null, bytes as base64, the rest as text.
func jsonPayload(ev *client.Event) (string, any, string) {
	r := renderPayload(ev)
	switch v := ev.Payload.(type) {
	case bool, int32, int64, uint32, uint64, string:
		return r.typeName, v, ""
	case proto.Message:
		if b, err := protojson.Marshal(v); err == nil {
			return r.typeName, json.RawMessage(b), ""
		}
	case float32:
		return jsonFloat(r.typeName, float64(v))
	case float64:
		return jsonFloat(r.typeName, v)
	}
	switch {
	case r.void:
		return r.typeName, nil, ""
	case r.binary != nil:
		return r.typeName, base64.StdEncoding.EncodeToString(r.binary), "base64"
	}
	return r.typeName, r.text, ""
}

// jsonFloat keeps NaN and infinities, which JSON cannot carry, as text.
func jsonFloat(typ string, f float64) (string, any, string) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return typ, fmt.Sprint(f), ""
	}
	return typ, f, ""
}
